package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.sql.SqlDialect;
import dev.lease.testing.TcpProxy;

/**
 * The contract suite plus what is specific to leases in a table: expiry on the database clock, two application
 * instances on separate DataSources, and bookkeeping that stays out of the caller's transaction. Run once per
 * {@link JdbcVariant} its subclass names, each on a database of its own (see {@link JdbcVariant#start()}); a subclass
 * runs variants of one token mode or user, so that the slow server variants run in different test JVMs.
 */
@ParameterizedClass(name = "{0}")
abstract class JdbcLeaseBackendContract extends LeaseBackendContractTest<JdbcLeaseBackend.JdbcGrant> {

    /** The database of the running variant; static, since it lives across the variant's tests. */
    private static TestDatabase database;

    @Parameter
    JdbcVariant variant;

    @BeforeParameterizedClassInvocation
    static void startDatabase(JdbcVariant variant) throws Exception {
        database = variant.start();
    }

    @AfterParameterizedClassInvocation
    static void closeDatabase() throws Exception {
        if (database != null) {
            database.close();
            database = null;
        }
    }

    /** The database of the running variant, for what only that database has. */
    static TestDatabase database() {
        return database;
    }

    /** The DataSource of the first application instance. */
    protected DataSource dataSource() {
        return database.first();
    }

    /** Another DataSource on the same database, as a second application instance would have. */
    protected DataSource secondDataSource() {
        return database.second();
    }

    /** The lease table of this variant. */
    protected String table() {
        return database.table();
    }

    /**
     * A DataSource allowed to create and drop tables, for the tests that need a table of their own; the lease user's
     * own {@link #dataSource()} unless the variant runs the suite as a user with only the documented grants.
     */
    protected DataSource adminDataSource() {
        return database.admin();
    }

    /** Called after a test created a table of its own through {@link #adminDataSource()}: grant the lease user on it. */
    protected void grantOnTestTable(String testTable) {
        database.grantOnTestTable().accept(testTable);
    }

    private JdbcLeaseBackend first;
    private JdbcLeaseBackend second;
    private final List<LeaseEngine> extraEngines = new ArrayList<>();

    @Override
    protected synchronized LeaseBackend<JdbcLeaseBackend.JdbcGrant> backend() {
        if (first == null) {
            first = variant.backend(dataSource(), table());
        }
        return first;
    }

    @Override
    protected synchronized LeaseBackend<JdbcLeaseBackend.JdbcGrant> secondBackend() {
        if (second == null) {
            second = variant.backend(secondDataSource(), table());
        }
        return second;
    }

    @Override
    protected void breakLease(String name) {
        int rows = new JdbcTemplate(secondDataSource())
                .update("UPDATE " + table() + " SET owner = 'someone-else' WHERE name = ?", name);
        assertThat(rows).as("lease row to break").isEqualTo(1);
    }

    @AfterEach
    void closeExtraEngines() {
        extraEngines.forEach(LeaseEngine::close);
    }

    /** On PostgreSQL each backend that waited holds a listening connection until it is closed. */
    @AfterEach
    synchronized void closeBackends() {
        if (first != null) {
            first.close();
        }
        if (second != null) {
            second.close();
        }
    }

    @Test
    void aGrantWhoseRowExpiredOnTheDatabaseClockIsTakenOverAtOnce() throws Exception {
        String name = uniqueName();
        var holder = grant(backend(), name, Duration.ofHours(1)).orElseThrow();
        assertThat(grant(secondBackend(), name, seconds(30))).as("taken while an hour is left").isEmpty();

        // Only the database's clock moves the row into the past; the holder's JVM still believes in an hour.
        new JdbcTemplate(dataSource()).update("UPDATE " + table() + " SET expires_at = " + dialect().now()
                + " WHERE name = ?", name);

        var successor = grant(secondBackend(), name, seconds(30)).orElseThrow();
        assertThat(successor.token().getAsLong()).isGreaterThan(holder.token().getAsLong());
        assertThat(backend().renew(holder)).as("expired holder renews").isFalse();
        secondBackend().release(successor);
    }

    @Test
    void aGrantTheDatabaseStillHoldsIsNotTakenWhateverTheJvmClockSays() throws Exception {
        String name = uniqueName();
        Duration ttl = shortTtl();
        var holder = grant(backend(), name, ttl).orElseThrow();
        // The database moves the expiry an hour ahead; if anyone judged expiry by grant time + ttl on a JVM clock,
        // the lease would be free again after one ttl.
        new JdbcTemplate(dataSource()).update("UPDATE " + table() + " SET expires_at = " + nowPlusMillisSql()
                + " WHERE name = ?", Duration.ofHours(1).toMillis(), name);
        await().during(ttl.multipliedBy(2)).atMost(ttl.multipliedBy(2).plus(seconds(10)))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> grant(secondBackend(), name, seconds(30)).isEmpty());
        assertThat(backend().renew(holder)).as("holder still renews after several ttls").isTrue();
        backend().release(holder);
    }

    @Test
    void noJvmTimeIsEverSentToTheDatabase() throws Exception {
        Set<String> boundTypes = ConcurrentHashMap.newKeySet();
        JdbcLeaseBackend recorded = new JdbcLeaseBackend(recording(dataSource(), boundTypes), table());
        String name = uniqueName();
        var grant = grant(recorded, name, seconds(30)).orElseThrow();
        assertThat(recorded.renew(grant)).isTrue();
        recorded.release(grant);
        assertThat(grant(recorded, name, seconds(30))).isPresent();
        recorded.abandon(new GrantRequest(name, seconds(30), reason -> { }));
        assertThat(boundTypes).as("types of every bound parameter").isNotEmpty()
                .allMatch(t -> t.equals("String") || t.equals("Long") || t.equals("Integer"), "a string or a number");
    }

    @Test
    void leaseBookkeepingNeverJoinsTheCallersTransaction() throws Exception {
        String name = uniqueName();
        JdbcTemplate outside = new JdbcTemplate(secondDataSource());
        TransactionTemplate business = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        var grant = business.execute(status -> {
            try {
                var g = grant(backend(), name, seconds(30)).orElseThrow();
                // Visible to another connection before the business transaction ends: it was committed on its own.
                assertThat(outside.queryForObject("SELECT owner FROM " + table() + " WHERE name = ?", String.class,
                        name)).isNotNull();
                assertThat(backend().renew(g)).isTrue();
                status.setRollbackOnly();
                return g;
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        // The business rollback did not undo the grant.
        assertThat(grant(secondBackend(), name, seconds(30))).as("granted to another instance after rollback").isEmpty();
        assertThat(backend().renew(grant)).isTrue();
        // Release inside a transaction that rolls back still frees the lease.
        business.executeWithoutResult(status -> {
            try {
                backend().release(grant);
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
            status.setRollbackOnly();
        });
        assertThat(grant(secondBackend(), name, seconds(30))).as("free after release").isPresent();
    }

    /**
     * The holder's renewal reaches the database, which executes it, and then the holder hears nothing more (a process
     * pause, a network that stops answering): had the statement run in a transaction, its COMMIT would never come and
     * the row would stay locked until the server drops the connection. Another instance takes over once the lease
     * expired, as after any other loss.
     */
    @Test
    void aHolderStalledRightAfterItsRenewalReachedTheDatabaseDoesNotBlockATakeover() throws Exception {
        assumeTrue(serverPort() > 0, "the database runs in this JVM: no network to stall");
        String name = uniqueName();
        Duration ttl = shortTtl();
        try (TcpProxy proxy = new TcpProxy(serverPort())) {
            SingleConnectionDataSource stalled = through(proxy);
            try {
                LeaseEngine holder = engineOver(new JdbcLeaseBackend(stalled, table()));
                holder.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(ttl));
                // From now on the database executes the holder's next renewal but its answer never comes back.
                proxy.delayReplyAfter("UPDATE".getBytes(StandardCharsets.US_ASCII), Duration.ofHours(1));

                var successor = await("another instance granted the lease of a holder stalled mid-renewal")
                        .atMost(ttl.multipliedBy(3).plus(seconds(10))).pollInterval(Duration.ofMillis(100))
                        .ignoreExceptions()
                        .until(() -> grant(secondBackend(), name, seconds(30)), Optional::isPresent).orElseThrow();
                secondBackend().release(successor);
            }
            finally {
                proxy.close();
                stalled.destroy();
            }
        }
    }

    @Test
    void theHealthCheckReadsTheLeaseTableWithinItsTimeoutAndNamesIt() throws Exception {
        List<Integer> timeouts = Collections.synchronizedList(new ArrayList<>());
        JdbcLeaseBackend watched = new JdbcLeaseBackend(queryTimeouts(dataSource(), timeouts), table());

        assertThat(watched.checkHealth(Duration.ofMillis(1500))).containsExactly(Map.entry("table", table()));
        assertThat(timeouts).as("query timeouts, in seconds, rounded up").containsExactly(2);
    }

    @Test
    void aDroppedLeaseTableIsNotHealthy() throws Exception {
        String dropped = table() + "_health";
        JdbcLeaseBackend backend = new JdbcLeaseBackend(dataSource(), dropped);
        new JdbcLeaseBackend(adminDataSource(), dropped).createSchema();
        grantOnTestTable(dropped);
        assertThat(backend.checkHealth(Duration.ofSeconds(2))).containsEntry("table", dropped);

        new JdbcTemplate(adminDataSource()).execute("DROP TABLE " + dropped);

        assertThatThrownBy(() -> backend.checkHealth(Duration.ofSeconds(2))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("The lease table " + dropped + " cannot be read");
    }

    @Test
    void anUnreachableDatabaseIsNotHealthy() throws Exception {
        assumeTrue(serverPort() > 0, "the database runs in this JVM: it cannot be out of reach");
        // A port held bound but not listening refuses every connection, and no other process can take it meanwhile:
        // the proxy in front of it stands for a database server that is down.
        try (Socket down = new Socket()) {
            down.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (TcpProxy proxy = new TcpProxy(down.getLocalPort())) {
                SingleConnectionDataSource unreachable = through(proxy);
                try {
                    JdbcLeaseBackend backend = new JdbcLeaseBackend(unreachable, table());
                    assertThatThrownBy(() -> backend.checkHealth(Duration.ofSeconds(2)))
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("The lease table " + table() + " cannot be read");
                }
                finally {
                    unreachable.destroy();
                }
            }
        }
    }

    /** The database server's TCP port, or 0 when the database runs inside this JVM. */
    protected int serverPort() {
        return database.port();
    }

    /** One connection to the database through {@code proxy}; only called when {@link #serverPort()} is positive. */
    protected SingleConnectionDataSource through(TcpProxy proxy) {
        return database.through(proxy);
    }

    /**
     * Through a DataSource that hands out the thread's transactional connection, a lease statement must still not run
     * on it: switching that connection to autocommit would commit the caller's work halfway.
     */
    @Test
    void leaseBookkeepingNeverCommitsTheCallersTransactionThroughATransactionAwareDataSource() throws Exception {
        // One DataSource object: transactions are bound to the thread by DataSource instance.
        DataSource shared = dataSource();
        JdbcTemplate admin = new JdbcTemplate(shared);
        new JdbcTemplate(adminDataSource()).execute("CREATE TABLE IF NOT EXISTS lease_business_probe (id VARCHAR(255))");
        grantOnTestTable("lease_business_probe");
        String name = uniqueName();
        TransactionAwareDataSourceProxy aware = new TransactionAwareDataSourceProxy(shared);
        JdbcLeaseBackend leases = new JdbcLeaseBackend(aware, table());
        TransactionTemplate business = new TransactionTemplate(new DataSourceTransactionManager(shared));
        var grant = business.execute(status -> {
            new JdbcTemplate(aware).update("INSERT INTO lease_business_probe (id) VALUES (?)", name);
            try {
                var g = grant(leases, name, seconds(30)).orElseThrow();
                status.setRollbackOnly();
                return g;
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        assertThat(admin.queryForObject("SELECT COUNT(*) FROM lease_business_probe WHERE id = ?", Integer.class, name))
                .as("the business row, rolled back").isZero();
        assertThat(grant(secondBackend(), name, seconds(30))).as("the grant, committed on its own").isEmpty();
        leases.release(grant);
    }

    @Test
    void abandoningARequestWhoseCommitWasNotReportedFreesTheRowForAnotherInstance() throws Exception {
        // The grant committed but its answer was lost (a dropped connection, a timeout): the same request, abandoned,
        // must free the row, or the name stays blocked for everyone until the ttl runs out.
        String name = uniqueName();
        GrantRequest request = new GrantRequest(name, Duration.ofHours(1), reason -> { });
        assertThat(backend().tryAcquire(request)).isPresent();
        assertThat(grant(secondBackend(), name, seconds(30))).as("busy before").isEmpty();

        backend().abandon(request);

        assertThat(grant(secondBackend(), name, seconds(30))).as("free after").isPresent();
    }

    @Test
    void abandoningARequestThatGotNoGrantLeavesTheHoldersRowAlone() throws Exception {
        String name = uniqueName();
        var holder = grant(secondBackend(), name, Duration.ofHours(1)).orElseThrow();
        GrantRequest refused = new GrantRequest(name, seconds(30), reason -> { });
        assertThat(backend().tryAcquire(refused)).isEmpty();

        backend().abandon(refused);

        assertThat(secondBackend().renew(holder)).as("the holder's grant survives").isTrue();
        assertThat(grant(backend(), name, seconds(30))).as("still busy").isEmpty();
        secondBackend().release(holder);
    }

    /** As on ZooKeeper: a case-insensitive collation (MySQL's default) would make them one row and one counter. */
    @Test
    void namesThatDifferOnlyInCaseAreTwoLeasesWithTokensOfTheirOwn() throws Exception {
        String upper = uniqueName() + "-CaseJob";
        String lower = uniqueName() + "-casejob";
        var firstOfUpper = grant(backend(), upper, seconds(30)).orElseThrow();
        backend().release(firstOfUpper);
        var upperHeld = grant(backend(), upper, seconds(30)).orElseThrow();

        var lowerHeld = grant(secondBackend(), lower, seconds(30))
                .orElseThrow(() -> new AssertionError("'" + lower + "' is busy while '" + upper + "' is held"));
        assertThat(upperHeld.token().getAsLong()).isGreaterThan(firstOfUpper.token().getAsLong());
        // Per-name tokens: a new row starts where the shared counter stands (nowhere here), so both names' first
        // grants carry the same token, and each counts on its own.
        assertThat(lowerHeld.token()).as("first token of '%s'", lower).isEqualTo(firstOfUpper.token());
        assertThat(new JdbcTemplate(dataSource()).queryForObject("SELECT token FROM " + table() + " WHERE name = ?",
                Long.class, upper)).as("token of '%s'", upper).isEqualTo(upperHeld.token().getAsLong());
        backend().release(upperHeld);
        secondBackend().release(lowerHeld);
    }

    /**
     * A batch larger than one statement's share, in two ttls: one UPDATE per ttl and per chunk renews every grant
     * still held, and exactly the grants broken, expired or released come back as lost, found by one SELECT per
     * statement that fell short.
     */
    @Test
    void aBatchIsRenewedWithOneStatementPerTtlAndChunkAndReportsExactlyTheLostGrants() throws Exception {
        List<String> prepared = Collections.synchronizedList(new ArrayList<>());
        JdbcLeaseBackend batch = new JdbcLeaseBackend(preparedSql(dataSource(), prepared), table());
        String prefix = uniqueName();
        List<JdbcLeaseBackend.JdbcGrant> longer = new ArrayList<>();
        for (int i = 0; i < BatchRenewal.CHUNK + 7; i++) {
            longer.add(grant(backend(), prefix + "-long-" + i, Duration.ofMinutes(10)).orElseThrow());
        }
        List<JdbcLeaseBackend.JdbcGrant> shorter = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            shorter.add(grant(backend(), prefix + "-short-" + i, Duration.ofMinutes(5)).orElseThrow());
        }
        JdbcTemplate admin = new JdbcTemplate(secondDataSource());
        // Every grant about to expire, so that a renewal shows in expires_at.
        admin.update("UPDATE " + table() + " SET expires_at = " + nowPlusMillisSql() + " WHERE name LIKE ?",
                seconds(30).toMillis(), prefix + "-%");
        breakLease(longer.get(3).name());
        breakLease(shorter.get(1).name());
        admin.update("UPDATE " + table() + " SET expires_at = " + dialect().now() + " WHERE name = ?",
                longer.get(BatchRenewal.CHUNK + 2).name());
        backend().release(longer.get(BatchRenewal.CHUNK - 1));
        Set<JdbcLeaseBackend.JdbcGrant> expectedLost = Set.of(longer.get(3), shorter.get(1),
                longer.get(BatchRenewal.CHUNK + 2), longer.get(BatchRenewal.CHUNK - 1));
        List<JdbcLeaseBackend.JdbcGrant> all = new ArrayList<>(longer);
        all.addAll(shorter);

        Set<JdbcLeaseBackend.JdbcGrant> lost = batch.renewAll(all);

        assertThat(lost).containsExactlyInAnyOrderElementsOf(expectedLost);
        // Two chunks of the longer ttl and one of the shorter, each with a loss.
        assertThat(prepared.stream().filter(sql -> sql.startsWith("UPDATE")).count()).as("renewal statements")
                .isEqualTo(3);
        assertThat(prepared.stream().filter(sql -> sql.startsWith("SELECT")).count()).as("lookups of the lost")
                .isEqualTo(3);
        // The survivors now expire a ttl from now, not in 30 s.
        Integer stillShort = admin.queryForObject("SELECT COUNT(*) FROM " + table() + " WHERE name LIKE ? AND owner IS "
                + "NOT NULL AND expires_at < " + nowPlusMillisSql(), Integer.class, prefix + "-%",
                Duration.ofMinutes(4).toMillis());
        assertThat(stillShort).as("rows with an owner a renewal did not extend: the two broken, the expired").isEqualTo(3);
        for (var g : all) {
            if (!expectedLost.contains(g)) {
                backend().release(g);
            }
        }
    }

    @Test
    void aBatchWhoseGrantsAreAllHeldNeedsNoLookup() throws Exception {
        List<String> prepared = Collections.synchronizedList(new ArrayList<>());
        JdbcLeaseBackend batch = new JdbcLeaseBackend(preparedSql(dataSource(), prepared), table());
        List<JdbcLeaseBackend.JdbcGrant> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(grant(backend(), uniqueName() + "-" + i, seconds(30)).orElseThrow());
        }
        assertThat(batch.renewAll(held)).isEmpty();
        assertThat(batch.renewAll(List.of())).isEmpty();
        assertThat(prepared.size()).as("statements").isEqualTo(1);
        assertThat(prepared.get(0)).startsWith("UPDATE");
        for (var g : held) {
            backend().release(g);
        }
    }

    /**
     * A lease table of the application's own may hold shorter names than the shipped DDL (255 characters, above any
     * lease name): a longer name is refused by the name check, which the engine makes before asking the database and
     * the starter at startup, rather than by the database at the grant. The column's length is read by
     * {@link JdbcLeaseBackend#verifySchema} or, without it, by the first grant before it writes.
     */
    @Test
    void aNameLongerThanTheNameColumnIsRefusedBeforeTheDatabaseIsAsked() throws Exception {
        String narrow = table() + "_narrow";
        // The table is the test's, made by the admin: a least-privileged lease user may not create tables.
        JdbcTemplate jdbc = new JdbcTemplate(adminDataSource());
        jdbc.execute("CREATE TABLE " + narrow + " (name VARCHAR(16) NOT NULL PRIMARY KEY, owner VARCHAR(64), "
                + "token BIGINT NOT NULL, expires_at "
                + (dialect() == SqlDialect.MYSQL ? "DATETIME(6)" : "TIMESTAMP WITH TIME ZONE") + " NOT NULL)");
        grantOnTestTable(narrow);
        try {
            JdbcLeaseBackend verified = new JdbcLeaseBackend(dataSource(), narrow);
            verified.verifySchema();
            assertRefusesLongerNamesThan16(verified);
            JdbcLeaseBackend unverified = new JdbcLeaseBackend(dataSource(), narrow);
            LeaseEngine engine = engineOver(unverified);
            assertThatThrownBy(() -> engine.tryAcquire(LeaseSpec.of("seventeen-chars-y", LeaseKind.CORRECTNESS)))
                    .as("not verified: the first grant reads the column's length before it writes")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holds at most 16");
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + narrow, Integer.class))
                    .as("nothing was written for the refused name").isZero();
            assertRefusesLongerNamesThan16(unverified);
            try (var lease = engine.acquire(LeaseSpec.of("sixteen-chars-yy", LeaseKind.CORRECTNESS))) {
                assertThat(lease.token().value()).isPositive();
            }
            verified.close();
            unverified.close();
        }
        finally {
            jdbc.execute("DROP TABLE " + narrow);
        }
    }

    private static void assertRefusesLongerNamesThan16(JdbcLeaseBackend backend) {
        assertThatThrownBy(() -> backend.validateName("seventeen-chars-x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'seventeen-chars-x' for the jdbc backend")
                .hasMessageContaining("17 characters long")
                .hasMessageContaining("name column of the lease table " + backend.table() + " holds at most 16");
        backend.validateName("sixteen-chars-xx");
    }

    /**
     * Any statement of any call can be rolled back by the database as the victim of a deadlock (on CI MariaDB chose a
     * shared grant's freeing statement, and the deletion of idle rows): each is run again, so that no grant is
     * reported busy, no renewal lost and no release, abandon or deletion failed for it. Seeded random victims, never
     * more in a row than {@link Call#VICTIM_ATTEMPTS} allows, before the statements of random grants, renewals (one
     * and a batch), releases, deletions of idle rows and abandons, on one backend alone, whose outcomes must then be
     * exactly those of a run without them: a free name is granted, with a higher token than its last, a held one
     * renews, a released one is free again.
     */
    @Test
    void everyStatementTheDatabaseRollsBackAsADeadlockVictimIsRunAgain() throws Exception {
        long seed = Long.getLong("lease-test.seed", System.nanoTime());
        Random random = new Random(seed);
        Thread testThread = Thread.currentThread();
        AtomicInteger inARow = new AtomicInteger();
        AtomicInteger injected = new AtomicInteger();
        JdbcLeaseBackend victims = variant.backend(new PausingDataSource(dataSource(), sql -> {
            if (Thread.currentThread() != testThread) {
                return;
            }
            if (inARow.get() < Call.VICTIM_ATTEMPTS - 1 && random.nextInt(3) == 0) {
                inARow.incrementAndGet();
                injected.incrementAndGet();
                throw new SQLTransactionRollbackException("Deadlock found when trying to get lock; try restarting "
                        + "transaction (injected)", "40001", 1213);
            }
            inARow.set(0);
        }), table());
        List<String> names = List.of(uniqueName() + "-a", uniqueName() + "-b", uniqueName() + "-c");
        Map<String, JdbcLeaseBackend.JdbcGrant> held = new HashMap<>();
        Map<String, Long> lastTokens = new HashMap<>();
        try {
            for (int i = 0; i < 60; i++) {
                String name = names.get(random.nextInt(names.size()));
                String step = "step " + i + " on " + name + " (seed " + seed + ")";
                JdbcLeaseBackend.JdbcGrant grant = held.get(name);
                if (grant == null && random.nextInt(5) == 0) {
                    victims.abandon(new GrantRequest(name, seconds(30), reason -> { }));
                }
                else if (grant == null) {
                    grant = grant(victims, name, seconds(30))
                            .orElseThrow(() -> new AssertionError("a free name reported busy: " + step));
                    Long last = lastTokens.put(name, grant.value());
                    if (last != null) {
                        assertThat(grant.value()).as("token after %d: %s", last, step).isGreaterThan(last);
                    }
                    held.put(name, grant);
                }
                else if (random.nextInt(3) == 0) {
                    assertThat(victims.renew(grant)).as("renewed: " + step).isTrue();
                }
                else if (random.nextInt(2) == 0) {
                    assertThat(victims.renewAll(held.values())).as("lost in a batch renewal: " + step).isEmpty();
                }
                else {
                    victims.release(grant);
                    held.remove(name);
                    victims.deleteIdleRows();
                }
            }
        }
        finally {
            held.values().forEach(victims::release);
            victims.close();
        }
        assertThat(injected.get()).as("victims injected (seed %d)", seed).isPositive();
    }

    @Test
    void refusesTableNamesThatAreNotPlainIdentifiers() {
        for (String bad : List.of("lease_lock; DROP TABLE users", "\"lease\"", "a.b.c", "1lease", "lease lock", "",
                "x".repeat(200))) {
            assertThatThrownBy(() -> new JdbcLeaseBackend(dataSource(), bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease.jdbc.table");
        }
        assertThat(new JdbcLeaseBackend(dataSource(), "leases.lease_lock").table()).isEqualTo("leases.lease_lock");
    }

    /** The dialect of this variant's database. */
    protected SqlDialect dialect() {
        return database.dialect();
    }

    private String nowPlusMillisSql() {
        return dialect().nowPlusMillis();
    }

    private LeaseEngine engineOver(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        extraEngines.add(engine);
        return engine;
    }

    /** A DataSource that notes the Java type of every parameter bound to a prepared statement. */
    private static DataSource recording(DataSource target, Set<String> boundTypes) {
        return new DelegatingDataSource(target) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            Object result = invoke(connection, method, args);
                            if (result instanceof PreparedStatement ps) {
                                return recordingStatement(ps, boundTypes);
                            }
                            return result;
                        });
            }
        };
    }

    private static PreparedStatement recordingStatement(PreparedStatement ps, Set<String> boundTypes) {
        return (PreparedStatement) Proxy.newProxyInstance(JdbcLeaseBackendContract.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("set") && args != null && args.length >= 2
                            && args[0] instanceof Integer) {
                        boundTypes.add(args[1] == null ? "null" : args[1].getClass().getSimpleName());
                    }
                    return invoke(ps, method, args);
                });
    }

    /** Records the SQL of every statement prepared through the returned DataSource. */
    static DataSource preparedSql(DataSource target, List<String> prepared) {
        return new DelegatingDataSource(target) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            if (method.getName().equals("prepareStatement")) {
                                prepared.add((String) args[0]);
                            }
                            return invoke(connection, method, args);
                        });
            }
        };
    }

    /** Records the query timeout of every statement prepared through the returned DataSource. */
    private static DataSource queryTimeouts(DataSource target, List<Integer> timeouts) {
        return new DelegatingDataSource(target) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            Object result = invoke(connection, method, args);
                            if (!(result instanceof PreparedStatement ps)) {
                                return result;
                            }
                            return Proxy.newProxyInstance(getClass().getClassLoader(),
                                    new Class<?>[] {PreparedStatement.class}, (p, m, a) -> {
                                        if (m.getName().equals("setQueryTimeout")) {
                                            timeouts.add((Integer) a[0]);
                                        }
                                        return invoke(ps, m, a);
                                    });
                        });
            }
        };
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
