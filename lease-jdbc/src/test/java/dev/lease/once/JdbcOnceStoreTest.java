package dev.lease.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseUnavailableException;
import dev.lease.testing.TestTiming;

/**
 * {@link JdbcOnceStore} on a real database, with two stores standing for two instances of an application: a key
 * committed once is never run again, a key another open transaction is recording makes the call wait for it and run
 * only if it rolled back, a failed run leaves no record, and the sweep deletes only keys older than the retention.
 * The work's effect is a row of its own table, written in the work's transaction.
 */
abstract class JdbcOnceStoreTest {

    private static final Duration WAIT = TestTiming.seconds(30);

    /** The database; lease_once and once_effect exist. */
    protected abstract DataSource dataSource();

    /** Waits until some session of the database is blocked waiting for a lock. */
    protected abstract void awaitABlockedSession(JdbcTemplate observer);

    protected JdbcTemplate jdbc;
    private JdbcOnceStore first;
    private JdbcOnceStore second;
    private String key;

    static void createTables(DataSource dataSource) {
        new JdbcOnceStore(dataSource, new DataSourceTransactionManager(dataSource)).createSchema();
        new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS once_effect (once_key VARCHAR(255) NOT NULL)");
    }

    @BeforeEach
    void stores() {
        jdbc = new JdbcTemplate(dataSource());
        first = new JdbcOnceStore(dataSource(), new DataSourceTransactionManager(dataSource()));
        second = new JdbcOnceStore(dataSource(), new DataSourceTransactionManager(dataSource()));
        key = "report-" + UUID.randomUUID();
    }

    private void effect() {
        jdbc.update("INSERT INTO once_effect (once_key) VALUES (?)", key);
    }

    private int effects() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM once_effect WHERE once_key = ?", Integer.class, key);
    }

    @Test
    void aCommittedKeyIsNotRunAgainByAnyInstance() throws Throwable {
        assertThat(first.runOnce(key, Optional.empty(), WAIT, this::effect)).isTrue();
        assertThat(second.runOnce(key, Optional.empty(), WAIT, this::effect)).isFalse();
        assertThat(first.runOnce(key, Optional.empty(), WAIT, this::effect)).isFalse();
        assertThat(effects()).isEqualTo(1);
    }

    /**
     * The goal of a {@code @Once} transaction: one statement more than the work's own, the key's insert with its lock
     * wait bounded in it, whether the key is recorded or found committed.
     */
    @Test
    void recordingOrFindingAKeyIsOneStatement() throws Throwable {
        CountingDataSource counted = new CountingDataSource(dataSource());
        JdbcOnceStore store = new JdbcOnceStore(counted, new DataSourceTransactionManager(counted));
        assertThat(store.runOnce(key + "-first", Optional.empty(), WAIT, () -> {
        })).isTrue();
        int before = counted.statements();
        assertThat(store.runOnce(key, Optional.empty(), WAIT, () -> {
        })).isTrue();
        assertThat(counted.statements() - before).as("statements of a call that records its key").isEqualTo(1);
        before = counted.statements();
        assertThat(store.runOnce(key, Optional.empty(), WAIT, () -> {
        })).isFalse();
        assertThat(counted.statements() - before).as("statements of a call whose key was committed").isEqualTo(1);
    }

    @Test
    void theTokenOfTheLeaseIsKeptWithTheKey() throws Throwable {
        first.runOnce(key, Optional.of(new FencingToken("reports", 42)), WAIT, this::effect);
        assertThat(jdbc.queryForObject("SELECT token FROM lease_once WHERE once_key = ?", Long.class, key))
                .isEqualTo(42L);
    }

    @Test
    void aConcurrentRunWaitsForTheFirstAndIsSkippedWhenItCommits() throws Exception {
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Boolean> holder = holder(finish, false);
        CompletableFuture<Boolean> competitor = CompletableFuture.supplyAsync(() -> run(second, this::effect));
        awaitABlockedSession(jdbc);
        assertThat(competitor).as("the second run waits for the first's transaction").isNotDone();
        finish.countDown();
        assertThat(holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(competitor.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("ran").isFalse();
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void aConcurrentRunWaitsForTheFirstAndRunsWhenItRollsBack() throws Exception {
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Boolean> holder = holder(finish, true);
        CompletableFuture<Boolean> competitor = CompletableFuture.supplyAsync(() -> run(second, this::effect));
        awaitABlockedSession(jdbc);
        finish.countDown();
        assertThatThrownBy(() -> holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).hasRootCauseMessage(
                "the report failed");
        assertThat(competitor.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("ran").isTrue();
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void aFailedRunLeavesNoRecordAndTheRetryRuns() throws Throwable {
        assertThatThrownBy(() -> first.runOnce(key, Optional.empty(), WAIT, () -> {
            effect();
            throw new java.io.IOException("the mail server refused");
        })).isInstanceOf(java.io.IOException.class);
        assertThat(effects()).isZero();
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM lease_once WHERE once_key = ?", Integer.class, key))
                .isZero();
        assertThat(second.runOnce(key, Optional.empty(), WAIT, this::effect)).isTrue();
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void aWaitBeyondItsBoundFailsNamingTheKey() throws Exception {
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Boolean> holder = holder(finish, false);
        try {
            assertThatThrownBy(() -> second.runOnce(key, Optional.empty(), Duration.ofSeconds(1), this::effect))
                    .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining("@Once key '" + key + "'")
                    .satisfies(ex -> assertThat(((LeaseUnavailableException) ex).lease()).isEqualTo(key));
        }
        finally {
            finish.countDown();
        }
        assertThat(holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void itJoinsTheCallersTransactionAndGoesWithIt() throws Throwable {
        TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        caller.executeWithoutResult(status -> {
            assertThat(run(first, this::effect)).isTrue();
            status.setRollbackOnly();
        });
        assertThat(effects()).isZero();
        assertThat(second.runOnce(key, Optional.empty(), WAIT, this::effect)).as("the key rolled back too").isTrue();
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void theSweepDeletesOnlyKeysOlderThanTheRetention() throws Throwable {
        String old = key + "-old";
        String young = key + "-young";
        insertRecordedAgo(old, Duration.ofDays(31));
        insertRecordedAgo(young, Duration.ofDays(29));
        first.runOnce(key, Optional.empty(), WAIT, this::effect);
        first.deleteOlderThan(Duration.ofDays(30));
        List<String> kept = jdbc.queryForList("SELECT once_key FROM lease_once WHERE once_key LIKE ?", String.class,
                key + "%");
        assertThat(kept).containsExactlyInAnyOrder(key, young);
    }

    private void insertRecordedAgo(String recorded, Duration ago) {
        jdbc.update("INSERT INTO lease_once (once_key, done_at, token) VALUES (?, ?, NULL)", recorded,
                Timestamp.from(Instant.now().minus(ago)));
    }

    /**
     * The first instance's run, started on another thread and returned once it wrote its effect (its key recorded,
     * its transaction open); it ends when {@code finish} is counted down, failing if {@code fails}.
     */
    private CompletableFuture<Boolean> holder(CountDownLatch finish, boolean fails) throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(1);
        CompletableFuture<Boolean> holder = CompletableFuture.supplyAsync(() -> run(first, () -> {
            effect();
            inside.countDown();
            await(finish);
            if (fails) {
                throw new IllegalStateException("the report failed");
            }
        }));
        assertThat(inside.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the first run started").isTrue();
        return holder;
    }

    /** One run of the work under this test's key, from any thread. */
    private boolean run(JdbcOnceStore store, dev.lease.spi.OnceStore.Work work) {
        try {
            return store.runOnce(key, Optional.empty(), WAIT, work);
        }
        catch (RuntimeException | Error ex) {
            throw ex;
        }
        catch (Throwable ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("not released");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    protected static void awaitTrue(BooleanSupplier condition) {
        Awaitility.await().atMost(WAIT).until(condition::getAsBoolean);
    }
}
