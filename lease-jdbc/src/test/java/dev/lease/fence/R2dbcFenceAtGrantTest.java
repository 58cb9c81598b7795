package dev.lease.fence;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.connection.SingleConnectionFactory;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.sql.SqlDialect;

/**
 * {@link R2dbcFence}'s fence at grant on a real database through its R2DBC driver: a lock wait ends at the validity
 * it is given, saying what it waited for; a nested section's advance joins the caller's reactive transaction that
 * holds the row's lock (a transaction of its own would wait for that lock); the caller's lock timeout is set back; a
 * holder stopped inside its fenced transaction blocks a successor no longer than the fence's idle timeout.
 */
abstract class R2dbcFenceAtGrantTest {

    /** One ConnectionFactory per database, shared by the tests of a class. */
    protected abstract ConnectionFactory connectionFactory();

    private DatabaseClient db;
    private R2dbcFence fence;
    private TransactionalOperator transactions;
    private String resource;

    @BeforeEach
    void setUp(TestInfo info) {
        db = DatabaseClient.create(connectionFactory());
        fence = new R2dbcFence(db);
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(connectionFactory()));
        fence.createSchema().block(seconds(30));
        resource = "r2dbc-" + info.getTestMethod().orElseThrow().getName().substring(0, 12) + "-" + System.nanoTime();
    }

    private FencingToken token(long value) {
        return new FencingToken("invoice", value);
    }

    /**
     * A stale holder paused inside its fenced transaction keeps the row locked: the successor's fence at grant gives up
     * at its validity instead of waiting for ever (PostgreSQL) or for the database's own timeout (50 s on MariaDB).
     */
    @Test
    void aFenceAtGrantWaitingForARowLockGivesUpAtTheValidityAndSaysSo() throws Exception {
        Sinks.Empty<Void> wakeUp = Sinks.empty();
        CompletableFuture<Void> stale = holdTheLockOf(fence.advance(resource, token(1)), wakeUp);
        Duration validity = Duration.ofSeconds(2);
        try {
            StepVerifier.create(fence.advanceAtGrant(resource, token(2), validity))
                    .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(CannotAcquireLockException.class)
                            .hasMessageContaining("Fence at grant of resource '" + resource + "' for lease 'invoice' "
                                    + "(token 2)")
                            .hasMessageContaining("gave up waiting for the lock on its row of lease_fence")
                            .hasMessageContaining("bounded by the lease's validity (2000 ms)"))
                    .verify(validity.plus(seconds(20)));
        }
        finally {
            wakeUp.tryEmitEmpty();
            stale.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(fence.current(resource).block(seconds(30))).as("the stale holder rolled back").isNull();
        StepVerifier.create(fence.advanceAtGrant(resource, token(2), validity)).verifyComplete();
        assertThat(fence.current(resource).block(seconds(30))).isEqualTo(2L);
    }

    /** A transaction of its own would wait for the row lock of the caller's, which does not end before it does. */
    @Test
    void aNestedSectionsAdvanceJoinsTheCallersTransactionThatLockedTheRow() {
        String other = resource + "-other";
        Mono<Long> nested = fence.advance(resource, token(3))
                .then(fence.advanceOnReentry(resource, token(4), Duration.ofSeconds(2)))
                .then(fence.advanceOnReentry(other, token(4), Duration.ofSeconds(2)))
                .then(committed(other).defaultIfEmpty(-1L))
                .as(transactions::transactional);

        StepVerifier.create(nested).as("nothing committed of the nested advance before the caller commits")
                .expectNext(-1L).verifyComplete();
        assertThat(committed(resource).block(seconds(30))).isEqualTo(4L);
        assertThat(committed(other).block(seconds(30))).isEqualTo(4L);
    }

    /** A section whose transaction already advanced the fence to the grant's token holds its lock: left alone. */
    @Test
    void aFenceAtGrantInsideTheTransactionThatAlreadyAdvancedItIsLeftAlone() {
        Mono<Long> again = fence.advance(resource, token(5))
                .then(fence.advanceAtGrant(resource, token(5), Duration.ofSeconds(2)))
                .then(committed(resource).defaultIfEmpty(-1L))
                .as(transactions::transactional);

        StepVerifier.create(again).expectNext(-1L).verifyComplete();
        assertThat(committed(resource).block(seconds(30))).isEqualTo(5L);
    }

    @Test
    void aNestedSectionsAdvanceOutsideATransactionCommitsOnItsOwn() {
        StepVerifier.create(fence.advanceOnReentry(resource, token(4), Duration.ofSeconds(2))).verifyComplete();
        assertThat(committed(resource).block(seconds(30))).isEqualTo(4L);
        StepVerifier.create(fence.advanceOnReentry(resource, token(3), Duration.ofSeconds(2)))
                .expectError(StaleTokenException.class).verify(seconds(30));
    }

    /** The bound is the fence's own: the caller's transaction gets its lock timeout back. */
    @Test
    void theCallersLockTimeoutIsSetBack() {
        Mono<String> lockTimeouts = dialect().flatMap(d -> lockTimeout(d)
                .flatMap(before -> fence.advance(resource + "-joined", token(5))
                        .then(fence.advanceOnReentry(resource + "-joined", token(5), Duration.ofSeconds(3)))
                        .then(fence.advanceOnReentry(resource, token(5), Duration.ofSeconds(3)))
                        .then(lockTimeout(d))
                        .map(after -> before + " -> " + after)))
                .as(transactions::transactional);

        StepVerifier.create(lockTimeouts)
                .assertNext(beforeAndAfter -> {
                    String[] both = beforeAndAfter.split(" -> ");
                    assertThat(both[1]).as("lock timeout before -> after").isEqualTo(both[0]);
                })
                .verifyComplete();
    }

    /**
     * The liveness hole the soak found: a holder stopped inside its fenced transaction (here a transaction that sends
     * nothing more, as a process under SIGSTOP) kept the fence row locked for as long as it stayed stopped, so every
     * successor's fence at grant timed out. Bounded, the database ends the stopped holder's session, the successor
     * goes through long before its own lock wait would give up, and the holder's commit fails.
     */
    @Test
    void aHolderStoppedInsideItsFencedTransactionNoLongerBlocksTheSuccessor() throws Exception {
        assumeTrue(idleTimeoutSetting() != null, "this database has no idle bound");
        R2dbcFence bounded = new R2dbcFence(db, (table, rejection) -> { }, Duration.ofSeconds(1));
        CountDownLatch locked = new CountDownLatch(1);
        Sinks.Empty<Void> wakeUp = Sinks.empty();
        // Stopped for longer than the successor would wait for the lock: only the bound can let it in.
        CompletableFuture<Void> holder = bounded.advance(resource, token(1)).then(Mono.fromRunnable(locked::countDown))
                .then(wakeUp.asMono())
                .as(transactions::transactional)
                .toFuture();
        assertThat(locked.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the holder wrote").isTrue();
        try {
            StepVerifier.create(bounded.advanceAtGrant(resource, token(2), seconds(20))).verifyComplete();
        }
        finally {
            wakeUp.tryEmitEmpty();
        }
        assertThat(committed(resource).block(seconds(30))).isEqualTo(2L);
        assertThatThrownBy(() -> holder.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .as("the stopped holder's commit").isInstanceOf(ExecutionException.class);
        assertThat(committed(resource).block(seconds(30))).isEqualTo(2L);
    }

    /**
     * The bound is the fenced transaction's alone: set before the statement that locks, once however many resources
     * the transaction fences, and gone once the transaction ends, from the very connection the next one gets.
     */
    @Test
    void theIdleBoundIsSetForTheFencedTransactionAndGoneAfterIt() {
        assumeTrue(idleTimeoutSetting() != null, "this database has no idle bound");
        SingleConnectionFactory one = new SingleConnectionFactory(connectionFactory());
        one.setSuppressClose(true);
        try {
            DatabaseClient onOne = DatabaseClient.create(one);
            R2dbcFence bounded = new R2dbcFence(onOne, (table, rejection) -> { }, Duration.ofSeconds(7));
            Mono<String> setting = onOne.sql(idleTimeoutSetting()).map(row -> String.valueOf(row.get(0))).first();
            String before = setting.block(seconds(30));
            List<String> during = setting
                    .flatMap(first -> bounded.advance(resource, token(1))
                            .then(bounded.advance(resource + "-other", token(1)))
                            .then(setting).map(second -> List.of(first, second)))
                    .as(TransactionalOperator.create(new R2dbcTransactionManager(one))::transactional)
                    .block(seconds(30));
            assertThat(during).containsExactly(before, idleTimeoutShown(7));
            assertThat(setting.block(seconds(30))).isEqualTo(before);
        }
        finally {
            one.destroy();
        }
    }

    /** Reads the connection's idle bound, or null where the database has none (H2). */
    private String idleTimeoutSetting() {
        return switch (dialect().block()) {
            case POSTGRESQL -> "SELECT current_setting('idle_in_transaction_session_timeout')";
            case MYSQL -> "SELECT @@SESSION.wait_timeout";
            case H2 -> null;
        };
    }

    /** How {@link #idleTimeoutSetting()} shows a bound of {@code seconds}. */
    private String idleTimeoutShown(int seconds) {
        return dialect().block() == SqlDialect.POSTGRESQL ? seconds + "s" : String.valueOf(seconds);
    }

    /** What a connection outside the caller's transaction sees: only what was committed. */
    private Mono<Long> committed(String fenced) {
        return Mono.usingWhen(Mono.from(connectionFactory().create()),
                connection -> Mono.from(connection.createStatement("SELECT fence FROM lease_fence WHERE resource = '"
                        + fenced + "'").execute()).flatMap(result -> Mono.from(result.map((row, meta) ->
                                row.get(0, Long.class)))),
                connection -> Mono.from(connection.close()));
    }

    private Mono<SqlDialect> dialect() {
        return Mono.just(SqlDialect.forProductName(connectionFactory().getMetadata().getName()).orElseThrow());
    }

    private Mono<String> lockTimeout(SqlDialect d) {
        return db.sql(d.readLockTimeout()).map(row -> String.valueOf(row.get(0))).first();
    }

    /**
     * Runs {@code write} in a reactive transaction that keeps its locks until woken up, then rolls back.
     *
     * @return completes when that transaction ended
     */
    private CompletableFuture<Void> holdTheLockOf(Mono<Void> write, Sinks.Empty<Void> wakeUp) throws Exception {
        CountDownLatch locked = new CountDownLatch(1);
        CompletableFuture<Void> holder = write.then(Mono.fromRunnable(locked::countDown))
                .then(wakeUp.asMono())
                .then(Mono.<Void>error(new RollBack()))
                .as(transactions::transactional)
                .onErrorResume(RollBack.class, rolledBack -> Mono.empty())
                .toFuture();
        assertThat(locked.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the stale holder wrote").isTrue();
        return holder;
    }

    /** Ends the stale holder's transaction with a rollback. */
    private static final class RollBack extends RuntimeException {
        RollBack() {
            super("roll back", null, false, false);
        }
    }
}
