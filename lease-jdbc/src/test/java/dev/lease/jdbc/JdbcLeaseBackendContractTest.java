package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * The contract suite with per-name tokens on H2 (a schema-qualified table), a real PostgreSQL and a real MariaDB
 * server, two DataSources standing for two application instances; and on the servers, what only that database can
 * get wrong.
 */
@EnumSource(value = JdbcVariant.class, names = {"H2", "POSTGRESQL", "MARIADB"})
class JdbcLeaseBackendContractTest extends JdbcLeaseBackendContract {

    /** A lease held in the west is busy in the east until released, then granted there with a higher token. */
    private void assertInstancesAgreeOnExpiry(JdbcLeaseBackend west, JdbcLeaseBackend east) throws Exception {
        String name = uniqueName();
        var held = grant(west, name, seconds(30)).orElseThrow();
        assertThat(grant(east, name, seconds(30))).as("taken from another time zone").isEmpty();
        assertThat(west.renew(held)).isTrue();
        west.release(held);
        var next = grant(east, name, seconds(30)).orElseThrow();
        assertThat(next.token().getAsLong()).isGreaterThan(held.token().getAsLong());
        east.release(next);
    }

    /** The faults only a server can have: sessions in different time zones, a killed connection, a stopped server. */
    @Nested
    @OnlyOn(JdbcVariant.POSTGRESQL)
    class OnPostgresql {

        private static PostgresDatabase postgres() {
            return database().server(PostgresDatabase.class);
        }

        @Test
        void instancesWhoseSessionsRunInDifferentTimeZonesAgreeOnExpiry() throws Exception {
            // 26 hours apart: with a timestamp column without time zone, the eastern instance would see the western
            // holder's lease as expired a day ago and take it.
            DataSource western = inTimeZone("Etc/GMT+12");
            DataSource eastern = inTimeZone("Pacific/Kiritimati");
            assertThat(new JdbcTemplate(western).queryForObject("SHOW TIME ZONE", String.class))
                    .isEqualTo("Etc/GMT+12");
            assertThat(new JdbcTemplate(eastern).queryForObject("SHOW TIME ZONE", String.class))
                    .isEqualTo("Pacific/Kiritimati");
            JdbcLeaseBackend west = new JdbcLeaseBackend(western);
            JdbcLeaseBackend east = new JdbcLeaseBackend(eastern);
            assertInstancesAgreeOnExpiry(west, east);
        }

        /** Connections whose session time zone is {@code zone} (pgjdbc would otherwise send the JVM's own). */
        private static DataSource inTimeZone(String zone) {
            return new DelegatingDataSource(postgres().dataSource()) {
                @Override
                public Connection getConnection() throws SQLException {
                    Connection connection = super.getConnection();
                    try (Statement statement = connection.createStatement()) {
                        statement.execute("SET TIME ZONE '" + zone + "'");
                    }
                    return connection;
                }
            };
        }

        @Test
        void aKilledConnectionInterruptsTheHolderWithLeaseLostException() throws Exception {
            // The holder's only connection: once the server kills it, renewal cannot reach the lease row.
            SingleConnectionDataSource single = new SingleConnectionDataSource(
                    postgres().dataSource(Map.of("ApplicationName", "lease-holder")).getConnection(), true);
            try {
                JdbcLeaseBackend holder = new JdbcLeaseBackend(single);
                assertHolderLosesLeaseWhen(holder, () -> {
                    Integer killed = new JdbcTemplate(postgres().dataSource()).queryForObject(
                            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?"
                                    + " AND datname = current_database()",
                            Integer.class, "lease-holder");
                    assertThat(killed).as("holder connections terminated").isEqualTo(1);
                });
            }
            finally {
                single.destroy();
            }
        }

        @Test
        void aStoppedDatabaseInterruptsTheHolderWithLeaseLostException() throws Exception {
            PostgresServer doomed = PostgresServer.start();
            try {
                JdbcLeaseBackend holder = new JdbcLeaseBackend(doomed.dataSource());
                holder.createSchema();
                assertHolderLosesLeaseWhen(holder, doomed::stop);
            }
            finally {
                doomed.close();
            }
        }

        /**
         * A waiter whose connection goes silent (a frozen network: pgjdbc has no socket timeout by default, so a
         * statement would wait for ever) gives up at its waitFor plus a bound, naming the unreachable store, never a
         * busy lease.
         */
        @Test
        void aWaiterCutOffByAFrozenNetworkGivesUpAtItsWaitForNamingTheUnreachableStore() throws Exception {
            Map<LeaseKind, LeaseBackend<?>> direct = new EnumMap<>(LeaseKind.class);
            direct.put(LeaseKind.CORRECTNESS, new JdbcLeaseBackend(postgres().dataSource()));
            direct.put(LeaseKind.EFFICIENCY, direct.get(LeaseKind.CORRECTNESS));
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try (TcpProxy proxy = new TcpProxy(postgres().port());
                    LeaseEngine holders = new LeaseEngine(BackendRouter.of(direct), LeaseDefaults.standard())) {
                SingleConnectionDataSource viaProxy = new SingleConnectionDataSource(
                        "jdbc:postgresql://" + proxy.address() + "/" + postgres().name(), "postgres", "", true);
                Map<LeaseKind, LeaseBackend<?>> cutOff = new EnumMap<>(LeaseKind.class);
                cutOff.put(LeaseKind.CORRECTNESS, new JdbcLeaseBackend(viaProxy));
                cutOff.put(LeaseKind.EFFICIENCY, cutOff.get(LeaseKind.CORRECTNESS));
                try (LeaseEngine waiters = new LeaseEngine(BackendRouter.of(cutOff), LeaseDefaults.standard())) {
                    String name = uniqueName();
                    LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(30));
                    Duration waitFor = Duration.ofMillis(1500);
                    try (Lease held = holders.acquire(spec)) {
                        long start = System.nanoTime();
                        Future<Lease> waiter = pool.submit(() -> waiters.acquire(spec.withWaitFor(waitFor)));
                        Thread.sleep(300); // waiting on the busy lease by now, over a live connection
                        proxy.freeze();

                        assertThatThrownBy(() -> waiter.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                                .isInstanceOf(ExecutionException.class)
                                .cause().isInstanceOf(LeaseUnavailableException.class)
                                .hasMessageContaining("'" + name + "'")
                                .hasMessageContaining("jdbc store could not be reached")
                                .hasMessageNotContaining("held by someone else");
                        Duration took = Duration.ofNanos(System.nanoTime() - start);
                        System.out.println("Frozen PostgreSQL connection: waiter with waitFor " + waitFor.toMillis()
                                + " ms gave up after " + took.toMillis() + " ms");
                        assertThat(took).as("waitFor plus a bound").isLessThanOrEqualTo(waitFor.plus(seconds(3)));
                    }
                    finally {
                        proxy.unfreeze(); // lets the abandoned statement end
                    }
                }
                finally {
                    viaProxy.destroy();
                }
            }
            finally {
                pool.shutdownNow();
            }
        }

        private void assertHolderLosesLeaseWhen(LeaseBackend<?> holder, ThrowingAction fault) throws Exception {
            Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
            routes.put(LeaseKind.CORRECTNESS, holder);
            routes.put(LeaseKind.EFFICIENCY, holder);
            Duration ttl = shortTtl();
            BlockingWork work = new BlockingWork();
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try (LeaseEngine holderEngine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard())) {
                Future<String> call = pool.submit(() -> holderEngine.execute(
                        LeaseSpec.of(uniqueName(), LeaseKind.CORRECTNESS).withTtl(ttl).withWaitFor(seconds(10)), work));
                assertThat(work.awaitStarted(seconds(30))).isTrue();
                long faultAt = System.nanoTime();
                fault.run();
                assertThatThrownBy(
                        () -> call.get(ttl.multipliedBy(2).plus(seconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(LeaseLostException.class)
                        .hasCauseInstanceOf(InterruptedException.class);
                assertThat(work.wasInterrupted()).as("holder interrupted").isTrue();
                System.out.println("Holder interrupted " + Duration.ofNanos(System.nanoTime() - faultAt).toMillis()
                        + " ms after the fault (ttl " + ttl.toMillis() + " ms)");
            }
            finally {
                pool.shutdownNow();
            }
        }

        @FunctionalInterface
        private interface ThrowingAction {
            void run() throws Exception;
        }
    }

    /**
     * What only MariaDB/MySQL can get wrong: session time zones with daylight saving time, and an UPDATE that changes
     * no value reporting no row with {@code useAffectedRows=true} (the driver setting of the second instance).
     */
    @Nested
    @OnlyOn(JdbcVariant.MARIADB)
    class OnMariaDb {

        private static boolean parisLoaded;

        @BeforeAll
        static void loadParis() throws Exception {
            parisLoaded = mariadb().loadTimeZone("Europe/Paris");
        }

        private static MariaDbDatabase mariadb() {
            return database().server(MariaDbDatabase.class);
        }

        @Test
        void instancesWhoseSessionsRunInDifferentTimeZonesAgreeOnExpiry() throws Exception {
            // 25 hours apart, MariaDB's widest offsets: expiry judged on session-local times would make the western
            // holder's lease a day old in the east.
            JdbcLeaseBackend west = new JdbcLeaseBackend(inZone("-12:00", ""));
            JdbcLeaseBackend east = new JdbcLeaseBackend(inZone("+13:00", ""));
            assertInstancesAgreeOnExpiry(west, east);
        }

        /**
         * Europe/Paris repeats 02:00-03:00 on 2025-10-26 and skips it on 2025-03-30. Each step runs on sessions whose
         * database clock is frozen at a chosen instant ({@code SET timestamp}), one in the holder's time zone, one in
         * another's: the lease lasts exactly its ttl from the last grant or renewal, for both.
         */
        @ParameterizedTest(name = "granted at {0} in {1}, seen from {2}")
        @CsvSource({
            "2025-10-26T00:40:00Z, Europe/Paris, +00:00", // renewal ends in the repeated hour's second pass
            "2025-10-26T00:40:00Z, +00:00, Europe/Paris",
            "2025-10-26T01:10:00Z, Europe/Paris, +00:00", // granted in the repeated hour's second pass
            "2025-10-26T01:10:00Z, +00:00, Europe/Paris",
            "2025-03-30T00:20:00Z, Europe/Paris, -05:00", // expires in the skipped hour
            "2025-03-30T00:20:00Z, -05:00, Europe/Paris",
        })
        void aLeaseLastsItsTtlAcrossADaylightSavingChangeInEveryTimeZone(Instant grantedAt, String holderZone,
                String otherZone) throws Exception {
            assumeTrue(parisLoaded, "Europe/Paris could not be loaded into MariaDB: apt-get install -y tzdata");
            Duration ttl = Duration.ofMinutes(30);
            Instant renewedAt = grantedAt.plus(ttl.dividedBy(2));
            Instant expiresAt = renewedAt.plus(ttl);
            String name = uniqueName() + "-" + grantedAt.getEpochSecond() + holderZone;

            var held = grant(at(grantedAt, holderZone), name, ttl).orElseThrow();
            assertThat(grant(at(grantedAt.plusSeconds(1), otherZone), name, ttl)).as("taken right after the grant")
                    .isEmpty();
            assertThat(at(renewedAt, holderZone).renew(held)).as("renewed halfway").isTrue();

            Instant justBefore = expiresAt.minusMillis(1);
            assertThat(grant(at(justBefore, otherZone), name, ttl)).as("taken from %s before expiry", otherZone)
                    .isEmpty();
            assertThat(grant(at(justBefore, holderZone), name, ttl)).as("taken from %s before expiry", holderZone)
                    .isEmpty();

            var next = grant(at(expiresAt, otherZone), name, ttl).orElseThrow(
                    () -> new AssertionError("not expired for " + otherZone + " at " + expiresAt));
            assertThat(next.token().getAsLong()).isGreaterThan(held.token().getAsLong());
            assertThat(at(expiresAt, holderZone).renew(held)).as("expired holder renews").isFalse();
        }

        /**
         * A renewal in the same database microsecond as the grant sets the same {@code expires_at}: with
         * {@code useAffectedRows=true} the UPDATE changed nothing and reports 0 rows, yet the lease is still held.
         */
        @Test
        void aRenewalThatChangesNoValueStillRenews() throws Exception {
            Instant frozen = Instant.now();
            JdbcLeaseBackend backend = new JdbcLeaseBackend(mariadb().dataSource("useAffectedRows=true",
                    "sessionVariables=timestamp=" + micros(frozen)));
            String name = uniqueName();
            var held = grant(backend, name, seconds(30)).orElseThrow();
            assertThat(backend.renew(held)).as("renewed at the grant's instant").isTrue();
            assertThat(backend.renew(held)).as("renewed again").isTrue();
            backend.release(held);
            assertThat(grant(secondBackend(), name, seconds(30))).as("free after release").isPresent();
        }

        /** As above for a batch: the short update count sends the batch to its lookup, which finds every grant held. */
        @Test
        void aBatchRenewalThatChangesNoValueStillRenewsEveryGrant() throws Exception {
            Instant frozen = Instant.now();
            JdbcLeaseBackend backend = new JdbcLeaseBackend(mariadb().dataSource("useAffectedRows=true",
                    "sessionVariables=timestamp=" + micros(frozen)));
            var first = grant(backend, uniqueName() + "-1", seconds(30)).orElseThrow();
            var second = grant(backend, uniqueName() + "-2", seconds(30)).orElseThrow();
            assertThat(backend.renewAll(java.util.List.of(first, second))).as("lost at the grants' instant").isEmpty();
            backend.release(first);
            backend.release(second);
        }

        /** A table made by the former script: a TIMESTAMP expires_at is converted through the session time zone. */
        @Test
        void aTableWhoseExpiryIsATimestampColumnIsRefusedWithTheFix() {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource());
            jdbc.execute("CREATE TABLE old_lease_lock (name VARCHAR(255) NOT NULL PRIMARY KEY, owner VARCHAR(64) NULL, "
                    + "token BIGINT NOT NULL, expires_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))");
            JdbcLeaseBackend old = new JdbcLeaseBackend(dataSource(), "old_lease_lock");
            assertThatThrownBy(old::verifySchema).isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("old_lease_lock.expires_at is a TIMESTAMP")
                    .hasMessageContaining("ALTER TABLE old_lease_lock MODIFY expires_at DATETIME(6) NOT NULL");

            jdbc.execute("ALTER TABLE old_lease_lock MODIFY expires_at DATETIME(6) NOT NULL");
            old.verifySchema();
        }

        /** A backend whose sessions run in {@code zone} with the database clock frozen at {@code instant}. */
        private static JdbcLeaseBackend at(Instant instant, String zone) {
            DataSource session = inZone(zone, ",timestamp=" + micros(instant));
            assertThat(new JdbcTemplate(session).queryForObject("SELECT @@session.timestamp", Double.class))
                    .as("frozen database clock").isCloseTo(instant.toEpochMilli() / 1000.0, within(0.001));
            return new JdbcLeaseBackend(session);
        }

        /** Connections whose session time zone is {@code zone}, with more session variables after it. */
        private static DataSource inZone(String zone, String moreVariables) {
            DataSource session = mariadb().dataSource("sessionVariables=time_zone='" + zone + "'" + moreVariables);
            assertThat(new JdbcTemplate(session).queryForObject("SELECT @@session.time_zone", String.class))
                    .as("session time zone").isEqualTo(zone);
            return session;
        }

        private static String micros(Instant instant) {
            return instant.getEpochSecond() + "." + String.format("%06d", instant.getNano() / 1000);
        }
    }
}
