package dev.lease.fence;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;

/**
 * {@link JdbcFence} and {@link FencedTable} against a real database: which tokens pass, that the row lock
 * serialises writers until commit, and that the fence lives and dies with the caller's transaction.
 */
abstract class JdbcFenceTest {

    /** The database; the lease_fence table and the account table exist. */
    protected abstract DataSource dataSource();

    /** Waits until some session of the database is blocked waiting for a row lock. */
    protected abstract void awaitABlockedSession(JdbcTemplate observer);

    protected JdbcTemplate jdbc;
    protected JdbcFence fence;
    protected TransactionTemplate transactions;
    private String resource;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    /** Creates the tables every test needs; subclasses call it once per database. */
    static void createTables(DataSource dataSource) {
        new JdbcFence(new JdbcTemplate(dataSource)).createSchema();
        new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS account (id BIGINT PRIMARY KEY, "
                + "balance BIGINT NOT NULL, owner_note VARCHAR(100), fence BIGINT)");
        new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS coded (code VARCHAR(100) PRIMARY KEY, "
                + "fence BIGINT)");
    }

    @BeforeEach
    void setUp(TestInfo info) {
        jdbc = new JdbcTemplate(dataSource());
        fence = new JdbcFence(jdbc);
        transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        resource = "resource-" + info.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    @Test
    void acceptsIncreasingAndEqualTokensAndRefusesLowerOnes() {
        inTransaction(() -> fence.advance(resource, token(1)));
        inTransaction(() -> fence.advance(resource, token(1)));
        inTransaction(() -> fence.advance(resource, token(5)));
        inTransaction(() -> fence.advance(resource, token(5)));
        assertThatThrownBy(() -> inTransaction(() -> fence.advance(resource, token(4))))
                .isInstanceOfSatisfying(StaleTokenException.class, ex -> {
                    assertThat(ex.resource()).isEqualTo(resource);
                    assertThat(ex.presented()).isEqualTo(token(4));
                    assertThat(ex.current()).isEqualTo(5);
                    assertThat(ex.fenceFarAhead()).isFalse();
                })
                .hasMessageContaining(resource).hasMessageContaining("lease 'billing' presented token 4")
                .hasMessageContaining("later holder").hasMessageNotContaining("reset");
        assertThat(fence.current(resource)).hasValue(5);
        inTransaction(() -> fence.advance(resource, token(6)));
        assertThat(fence.current(resource)).hasValue(6);
    }

    /** What the auto-configuration's lease.fence.rejected counter counts: refusals only, tagged by table. */
    @Test
    void everyRefusalAndOnlyThoseIsToldToTheListenerWithItsTable() {
        List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        JdbcFence observed = new JdbcFence(jdbc, (table, rejection) -> told.add(table + " " + rejection.resource()
                + " " + rejection.presented().value() + "<" + rejection.current()));
        long id = System.nanoTime();
        jdbc.update("INSERT INTO account (id, balance, fence) VALUES (?, 0, NULL)", id);
        FencedTable accounts = observed.table("account", "id");

        inTransaction(() -> observed.advance(resource, token(5)));
        inTransaction(() -> observed.advance(resource, token(5)));
        inTransaction(() -> accounts.update(id, token(3), Map.of("balance", 10)));
        assertThat(told).isEmpty();
        assertThatThrownBy(() -> inTransaction(() -> observed.advance(resource, token(4))))
                .isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> inTransaction(() -> accounts.update(id, token(2), Map.of("balance", 666))))
                .isInstanceOf(StaleTokenException.class);
        assertThat(told).containsExactly("lease_fence " + resource + " 4<5", "account account[id=" + id + "] 2<3");

        JdbcFence broken = new JdbcFence(jdbc, (table, rejection) -> {
            throw new IllegalStateException("metrics are down");
        });
        assertThatThrownBy(() -> inTransaction(() -> broken.advance(resource, token(1))))
                .as("a failing listener does not hide the refusal").isInstanceOf(StaleTokenException.class);
    }

    /**
     * A write that changes no value still passes with an equal token: drivers that count changed rows rather than
     * matched ones (MariaDB's useAffectedRows=true) report 0 rows for it.
     */
    @Test
    void anEqualTokenPassesEvenWhenTheWriteChangesNothing() {
        inTransaction(() -> fence.advance(resource, token(5)));
        inTransaction(() -> fence.advance(resource, token(5)));
        fence.advanceAtGrant(resource, token(5));
        assertThat(fence.current(resource)).hasValue(5);
        assertThatThrownBy(() -> inTransaction(() -> fence.advance(resource, token(4))))
                .isInstanceOf(StaleTokenException.class);
    }

    /** Like {@link #anEqualTokenPassesEvenWhenTheWriteChangesNothing} for a table with its own fence column. */
    @Test
    void aFencedTableAcceptsAnEqualTokenEvenWhenTheWriteChangesNothing() {
        long id = System.nanoTime();
        jdbc.update("INSERT INTO account (id, balance, fence) VALUES (?, 0, NULL)", id);
        FencedTable accounts = fence.table("account", "id");
        inTransaction(() -> accounts.update(id, token(5), Map.of("balance", 10)));
        inTransaction(() -> accounts.update(id, token(5), Map.of("balance", 10)));
        accounts.update(id, token(5), Map.of("balance", 10));
        accounts.advanceAtGrant(id, token(5));
        assertThat(jdbc.queryForObject("SELECT fence FROM account WHERE id = ?", Long.class, id)).isEqualTo(5);
        assertThatThrownBy(() -> inTransaction(() -> accounts.update(id, token(4), Map.of("balance", 10))))
                .isInstanceOf(StaleTokenException.class);
    }

    /** As on PostgreSQL and H2: a case-insensitive collation (MySQL's default) would make them share one fence. */
    @Test
    void resourcesThatDifferOnlyInCaseHaveFencesOfTheirOwn() {
        String upper = resource + "-Invoice";
        String lower = resource + "-invoice";
        inTransaction(() -> fence.advance(upper, token(7)));
        inTransaction(() -> fence.advance(lower, token(2)));
        assertThat(fence.current(upper)).hasValue(7);
        assertThat(fence.current(lower)).hasValue(2);
    }

    /** The suggested reset is valid SQL that resets exactly this resource, even with a quote in its name. */
    @Test
    void aFenceFarAheadOfTheTokenSuggestsACounterResetThatRuns() {
        String quoted = resource + "-o'clock";
        inTransaction(() -> fence.advance(quoted, token(500)));
        inTransaction(() -> fence.advance(resource, token(500)));
        String reset = resetSuggestedBy(() -> inTransaction(() -> fence.advance(quoted, token(2))));
        assertThat(reset).isEqualTo("UPDATE lease_fence SET fence = 0 WHERE resource = '" + resource + "-o''clock'");

        assertThat(jdbc.update(reset)).isEqualTo(1);
        assertThat(fence.current(quoted)).hasValue(0);
        assertThat(fence.current(resource)).hasValue(500);
        inTransaction(() -> fence.advance(quoted, token(2)));
        assertThat(fence.current(quoted)).hasValue(2);
    }

    @Test
    void aFencedTableWithATextKeySuggestsAResetThatRuns() {
        String code = "INV-'" + System.nanoTime() + "'";
        String neighbour = code + "-2";
        jdbc.update("INSERT INTO coded (code, fence) VALUES (?, 500), (?, 500)", code, neighbour);
        FencedTable coded = fence.table("coded", "code");
        String reset = resetSuggestedBy(() -> inTransaction(() -> coded.update(code, token(2), Map.of())));
        assertThat(reset).isEqualTo("UPDATE coded SET fence = 0 WHERE code = '" + code.replace("'", "''") + "'");

        assertThat(jdbc.update(reset)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT fence FROM coded WHERE code = ?", Long.class, code)).isZero();
        assertThat(jdbc.queryForObject("SELECT fence FROM coded WHERE code = ?", Long.class, neighbour)).isEqualTo(500);
        inTransaction(() -> coded.update(code, token(2), Map.of()));
        assertThat(jdbc.queryForObject("SELECT fence FROM coded WHERE code = ?", Long.class, code)).isEqualTo(2);
    }

    /** The statement a far-ahead StaleTokenException suggests, which ends its message. */
    private static String resetSuggestedBy(Runnable staleWrite) {
        try {
            staleWrite.run();
        }
        catch (StaleTokenException ex) {
            assertThat(ex.fenceFarAhead()).isTrue();
            assertThat(ex.getMessage()).contains("ZooKeeper znode was deleted");
            String lead = "reset it: ";
            return ex.getMessage().substring(ex.getMessage().indexOf(lead) + lead.length());
        }
        throw new AssertionError("the stale write was accepted");
    }

    @ParameterizedTest(name = "fence row existed before: {0}")
    @ValueSource(booleans = {true, false})
    void aLowerTokenWaitingOnTheRowLockFailsOnceTheHigherOneCommits(boolean rowExists) throws Exception {
        if (rowExists) {
            inTransaction(() -> fence.advance(resource, token(1)));
        }
        CountDownLatch highAdvanced = new CountDownLatch(1);
        CountDownLatch commitHigh = new CountDownLatch(1);
        Future<?> high = pool.submit(() -> inTransaction(() -> {
            fence.advance(resource, token(3));
            highAdvanced.countDown();
            awaitLatch(commitHigh);
        }));
        assertThat(highAdvanced.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        Future<?> low = pool.submit(() -> inTransaction(() -> fence.advance(resource, token(2))));

        try {
            awaitABlockedSession(new JdbcTemplate(dataSource()));
        }
        catch (RuntimeException notBlocked) {
            throw new AssertionError("lower token not blocked; it ended with: " + outcome(low), notBlocked);
        }
        assertThat(low).as("lower token while the higher one holds the row lock").isNotDone();

        commitHigh.countDown();
        high.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> low.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(StaleTokenException.class, ex -> {
                    assertThat(ex.presented().value()).isEqualTo(2);
                    assertThat(ex.current()).isEqualTo(3);
                });
        assertThat(fence.current(resource)).hasValue(3);
    }

    @Test
    void aRolledBackBusinessTransactionRollsTheFenceBackToo() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean(DataSource.class, this::dataSource);
            context.register(BusinessConfiguration.class);
            context.refresh();
            AccountService service = context.getBean(AccountService.class);
            long id = System.nanoTime();
            jdbc.update("INSERT INTO account (id, balance) VALUES (?, 0)", id);

            service.deposit(resource, id, token(3), 10, false);
            assertThatThrownBy(() -> service.deposit(resource, id, token(7), 100, true))
                    .isInstanceOf(IllegalStateException.class);
            // Token 7 never committed, so the fence stays at 3 and the next holder's token 5 is accepted.
            assertThat(fence.current(resource)).hasValue(3);
            service.deposit(resource, id, token(5), 1, false);
            assertThat(jdbc.queryForObject("SELECT balance FROM account WHERE id = ?", Long.class, id)).isEqualTo(11);
            assertThatThrownBy(() -> service.deposit(resource, id, token(4), 1000, false))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(jdbc.queryForObject("SELECT balance FROM account WHERE id = ?", Long.class, id)).isEqualTo(11);
        }
    }

    @Test
    void advancingOutsideATransactionIsRefusedBecauseTheRowLockWouldNotHoldUntilTheWrite() {
        assertThatThrownBy(() -> fence.advance(resource, token(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(resource).hasMessageContaining("no transaction is active")
                .hasMessageContaining("transaction manager of the DataSource");
        assertThat(fence.current(resource)).isEmpty();
    }

    /**
     * Another database's transaction (as under {@code @Transactional("otherTm")}) leaves the fence's DataSource in
     * auto-commit: its row lock would be gone before the write it guards.
     */
    @Test
    void aTransactionOfAnotherDataSourceDoesNotCountAndOnlyTheFencesOwnDoes() {
        JdbcDataSource other = new JdbcDataSource();
        other.setURL("jdbc:h2:mem:other-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
        TransactionTemplate otherTransactions = new TransactionTemplate(new DataSourceTransactionManager(other));
        try {
            assertThatThrownBy(() -> otherTransactions.executeWithoutResult(
                    status -> fence.advance(resource, token(1))))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining(resource)
                    .hasMessageContaining("belongs to another transaction manager")
                    .hasMessageContaining("transaction manager of the DataSource");
            // An earlier statement on the fence's DataSource in that transaction binds its connection to the thread,
            // still in auto-commit.
            assertThatThrownBy(() -> otherTransactions.executeWithoutResult(status -> {
                jdbc.queryForObject("SELECT COUNT(*) FROM " + JdbcFence.TABLE, Long.class);
                fence.advance(resource, token(1));
            })).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("belongs to another transaction manager");
            assertThat(fence.current(resource)).isEmpty();

            otherTransactions.executeWithoutResult(status -> inTransaction(() -> fence.advance(resource, token(2))));
            inTransaction(() -> fence.advance(resource, token(3)));
            assertThat(fence.current(resource)).hasValue(3);
        }
        finally {
            new JdbcTemplate(other).execute("SHUTDOWN");
        }
    }

    @Test
    void aFencedTableChecksAndMovesItsOwnFenceColumnInTheSameUpdate() {
        long id = System.nanoTime();
        jdbc.update("INSERT INTO account (id, balance, fence) VALUES (?, 0, NULL)", id);
        FencedTable accounts = fence.table("account", "id");

        inTransaction(() -> accounts.update(id, token(2), Map.of("balance", 10)));
        inTransaction(() -> accounts.update(id, token(2), Map.of("balance", 20, "owner_note", "second write")));
        assertThatThrownBy(() -> inTransaction(() -> accounts.update(id, token(1), Map.of("balance", 666))))
                .isInstanceOfSatisfying(StaleTokenException.class, ex -> {
                    assertThat(ex.resource()).isEqualTo("account[id=" + id + "]");
                    assertThat(ex.presented()).isEqualTo(token(1));
                    assertThat(ex.current()).isEqualTo(2);
                });
        Map<String, Object> row = jdbc.queryForMap("SELECT balance, owner_note, fence FROM account WHERE id = ?", id);
        assertThat(row).containsEntry(key(row, "balance"), 20L).containsEntry(key(row, "fence"), 2L)
                .containsEntry(key(row, "owner_note"), "second write");

        Map<String, Object> nullable = new HashMap<>();
        nullable.put("owner_note", null);
        inTransaction(() -> accounts.update(id, token(9), nullable));
        assertThat(jdbc.queryForObject("SELECT fence FROM account WHERE id = ?", Long.class, id)).isEqualTo(9);

        assertThatThrownBy(() -> accounts.update(-1L, token(10), Map.of("balance", 1)))
                .isInstanceOf(EmptyResultDataAccessException.class).hasMessageContaining("account");
    }

    /** Fence at grant: committed on its own before it returns, so the caller's transaction cannot take it back. */
    @Test
    void advanceAtGrantCommitsOnItsOwnWhateverTheCallersTransactionDoes() {
        long id = System.nanoTime();
        jdbc.update("INSERT INTO account (id, balance, fence) VALUES (?, 0, 1)", id);
        FencedTable accounts = fence.table("account", "id");
        String fenceOfResource = "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = ?";
        String fenceOfAccount = "SELECT fence FROM account WHERE id = ?";

        transactions.executeWithoutResult(status -> {
            fence.advanceAtGrant(resource, token(4));
            accounts.advanceAtGrant(id, token(4));
            assertThat(committed(fenceOfResource, resource)).as("lease_fence, seen by another connection").isEqualTo(4);
            assertThat(committed(fenceOfAccount, id)).as("account fence, seen by another connection").isEqualTo(4);
            status.setRollbackOnly();
        });
        assertThat(fence.current(resource)).hasValue(4);
        assertThat(committed(fenceOfAccount, id)).isEqualTo(4);

        fence.advanceAtGrant(resource, token(4));
        accounts.advanceAtGrant(id, token(4));
        assertThatThrownBy(() -> accounts.advanceAtGrant(id, token(3)))
                .isInstanceOfSatisfying(StaleTokenException.class, ex -> {
                    assertThat(ex.resource()).isEqualTo("account[id=" + id + "]");
                    assertThat(ex.current()).isEqualTo(4);
                });
        assertThatThrownBy(() -> fence.advanceAtGrant(resource, token(3)))
                .isInstanceOfSatisfying(StaleTokenException.class, ex -> assertThat(ex.current()).isEqualTo(4));
        assertThatThrownBy(() -> accounts.advanceAtGrant(-1L, token(5)))
                .isInstanceOf(EmptyResultDataAccessException.class);
        assertThat(fence.current(resource)).hasValue(4);
        assertThat(jdbc.queryForMap("SELECT balance, fence FROM account WHERE id = ?", id).values())
                .containsExactly(0L, 4L);
    }

    /**
     * The liveness hole the soak found: a holder stopped inside its fenced transaction (here a thread that sends
     * nothing more, as a process under SIGSTOP) kept the fence row locked for as long as it stayed stopped, so every
     * successor's fence at grant timed out. Bounded, the database ends the stopped holder's session, the successor
     * goes through long before its own lock wait would give up, and the holder's commit fails.
     */
    @Test
    void aHolderStoppedInsideItsFencedTransactionNoLongerBlocksTheSuccessor() throws Exception {
        assumeTrue(idleTimeoutSetting() != null, "this database has no idle bound");
        JdbcFence bounded = new JdbcFence(jdbc, (table, rejection) -> { }, Duration.ofSeconds(1));
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch wake = new CountDownLatch(1);
        Future<?> holder = pool.submit(() -> transactions.executeWithoutResult(status -> {
            bounded.advance(resource, token(1));
            locked.countDown();
            // Stopped for longer than the successor would wait for the lock: only the bound can let it in.
            try {
                wake.await(seconds(120).toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }));
        awaitLatch(locked);
        try {
            bounded.advanceAtGrant(resource, token(2), seconds(20));
        }
        finally {
            wake.countDown();
        }
        assertThat(committed("SELECT fence FROM lease_fence WHERE resource = ?", resource)).isEqualTo(2L);
        assertThatThrownBy(() -> holder.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .as("the stopped holder's commit").isInstanceOf(ExecutionException.class);
        assertThat(committed("SELECT fence FROM lease_fence WHERE resource = ?", resource)).isEqualTo(2L);
    }

    /**
     * The bound is the fenced transaction's alone: set before the statement that locks, by the fence and by a fenced
     * table alike, and gone once the transaction ends, from the very connection the pool hands out next.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fence", "table"})
    void theIdleBoundIsSetForTheFencedTransactionAndGoneAfterIt(String writer) throws Exception {
        assumeTrue(idleTimeoutSetting() != null, "this database has no idle bound");
        long id = System.nanoTime();
        jdbc.update("INSERT INTO account (id, balance, fence) VALUES (?, 0, NULL)", id);
        try (Connection connection = dataSource().getConnection()) {
            SingleConnectionDataSource one = new SingleConnectionDataSource(connection, true);
            JdbcTemplate onOne = new JdbcTemplate(one);
            JdbcFence bounded = new JdbcFence(onOne, (table, rejection) -> { }, Duration.ofSeconds(7));
            String before = onOne.queryForObject(idleTimeoutSetting(), String.class);
            List<String> during = new java.util.ArrayList<>();
            new TransactionTemplate(new DataSourceTransactionManager(one)).executeWithoutResult(status -> {
                during.add(onOne.queryForObject(idleTimeoutSetting(), String.class));
                if (writer.equals("fence")) {
                    bounded.advance(resource, token(1));
                }
                else {
                    bounded.table("account", "id").update(id, token(1), Map.of("balance", 1));
                }
                during.add(onOne.queryForObject(idleTimeoutSetting(), String.class));
            });
            assertThat(during).containsExactly(before, idleTimeoutShown(7));
            assertThat(onOne.queryForObject(idleTimeoutSetting(), String.class)).isEqualTo(before);
        }
    }

    /** Reads the connection's idle bound, or null where the database has none (H2). */
    protected String idleTimeoutSetting() {
        return null;
    }

    /** How {@link #idleTimeoutSetting()} shows a bound of {@code seconds}. */
    protected String idleTimeoutShown(int seconds) {
        return String.valueOf(seconds);
    }

    /** Read on a connection of its own, outside any transaction of this thread: only committed values. */
    private Long committed(String sql, Object arg) {
        try (Connection connection = dataSource().getConnection();
                PreparedStatement read = connection.prepareStatement(sql)) {
            read.setObject(1, arg);
            try (ResultSet row = read.executeQuery()) {
                return row.next() ? row.getLong(1) : null;
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void aFencedTableAcceptsOnlyPlainIdentifiers() {
        assertThatThrownBy(() -> fence.table("account; DROP TABLE account", "id"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fence.table("account", "id = id OR 1"))
                .isInstanceOf(IllegalArgumentException.class);
        FencedTable accounts = fence.table("account", "id");
        assertThatThrownBy(() -> accounts.update(1L, token(1), Map.of("balance = 0, fence", 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> accounts.update(1L, token(1), Map.of("fence", 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence column");
    }

    @Test
    void refusesResourceNamesItCannotStore() {
        assertThatThrownBy(() -> fence.advance(" ", token(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fence.advance("x".repeat(256), token(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fence.advance("a\nb", token(1))).isInstanceOf(IllegalArgumentException.class);
    }

    private static String outcome(Future<?> future) {
        try {
            return future.isDone() ? String.valueOf(future.get()) : "still running";
        }
        catch (Exception ex) {
            return ex.getCause() != null ? ex.getCause().toString() : ex.toString();
        }
    }

    private static String key(Map<String, Object> row, String column) {
        return row.keySet().stream().filter(k -> k.equalsIgnoreCase(column)).findFirst().orElse(column);
    }

    private static FencingToken token(long value) {
        return new FencingToken("billing", value);
    }

    private void inTransaction(Runnable work) {
        transactions.executeWithoutResult(status -> work.run());
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("latch not released");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Polls for a blocked session with a bound; used by subclasses. */
    protected static void awaitTrue(java.util.concurrent.Callable<Boolean> condition) {
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(20)).until(condition);
    }

    /** A business service as an application writes it: the fence check first, in the same transaction. */
    static class AccountService {

        private final JdbcTemplate jdbc;
        private final JdbcFence fence;

        AccountService(JdbcTemplate jdbc, JdbcFence fence) {
            this.jdbc = jdbc;
            this.fence = fence;
        }

        @Transactional
        public void deposit(String resource, long accountId, FencingToken token, long amount, boolean failAfterwards) {
            fence.advance(resource, token);
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, accountId);
            if (failAfterwards) {
                throw new IllegalStateException("business failure after the write");
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class BusinessConfiguration {

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        JdbcFence jdbcFence(JdbcTemplate jdbcTemplate) {
            return new JdbcFence(jdbcTemplate);
        }

        @Bean
        AccountService accountService(JdbcTemplate jdbcTemplate, JdbcFence jdbcFence) {
            return new AccountService(jdbcTemplate, jdbcFence);
        }
    }
}
