package dev.lease.reactive;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngine;
import dev.lease.core.LeaseEngineListener;
import dev.lease.core.LossCause;
import dev.lease.fence.R2dbcFence;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/**
 * Reactive fence at grant and re-entry on a real database through its R2DBC driver, in the shape of the reactive
 * quick start: a fenced section whose reactive transaction advances the fence, then subscribes to another section
 * leased on the same name. The nested section must complete with its lease intact and the fence advanced once at
 * grant: a second fence at grant in a transaction of its own waited for the row lock of the caller's transaction, for
 * ever on PostgreSQL (and 50 s on MariaDB) while the engine renewed the lease, so that no instance could take the name.
 * And no fence at grant waits longer than the lease's validity for a row another transaction holds.
 */
abstract class ReactiveFenceAtGrantReentryTest {

    /** One ConnectionFactory per database: transactions bind to it. */
    protected abstract ConnectionFactory connectionFactory();

    private final InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
    private final List<String> losses = new CopyOnWriteArrayList<>();
    private final AtomicInteger fenceCalls = new AtomicInteger();
    private R2dbcFence fence;
    private TransactionalOperator transactions;
    private LeaseEngine engine;
    private ReactiveLeaseTemplate leases;
    private LeaseSpec spec;
    private String resource;

    @BeforeEach
    void setUp(TestInfo info) {
        fence = new R2dbcFence(DatabaseClient.create(connectionFactory()));
        fence.createSchema().block(seconds(30));
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(connectionFactory()));
        String name = "invoice-" + Math.abs(System.nanoTime() % 1_000_000_000);
        spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS);
        resource = name + "-" + info.getTestMethod().orElseThrow().getName().substring(0, 12);
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        engine = LeaseEngine.builder(BackendRouter.of(routes)).listeners(List.of(new LeaseEngineListener() {
            @Override
            public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
                losses.add(lease.name() + " " + cause);
            }
        })).build();
        // As the starter declares it, each step counted.
        leases = new ReactiveLeaseTemplate(engine, ReactiveGrantFence.of(
                (fenced, token, validity) -> counted(fence.advanceAtGrant(fenced, token, validity)),
                (fenced, token, validity) -> counted(fence.advanceOnReentry(fenced, token, validity))));
    }

    @AfterEach
    void closeEngine() {
        engine.close();
    }

    private Mono<Void> counted(Mono<Void> advance) {
        return Mono.fromRunnable(fenceCalls::incrementAndGet).then(advance);
    }

    @Test
    void reenteringInsideTheTransactionThatAdvancedTheFenceCompletesAndFencesOnce() {
        Mono<String> nested = leases.execute(spec.withFence(resource), outer -> fence.advance(resource, outer.token())
                .then(leases.execute(spec.withFence(resource), inner -> {
                    assertThat(inner).isSameAs(outer);
                    return fence.advance(resource, inner.token()).then(Mono.fromCallable(() -> {
                        assertThat(inner.isValid()).as("the re-entered lease is valid").isTrue();
                        return "done";
                    }));
                }))
                .as(transactions::transactional));

        assertThat(nested.block(seconds(30))).as("the nested section completed").isEqualTo("done");
        assertThat(losses).as("leases declared lost").isEmpty();
        assertThat(fenceCalls).as("fence at grant calls").hasValue(1);
        assertThat(fence.current(resource).block(seconds(30))).isEqualTo(lastToken());
    }

    @Test
    void aNestedSectionNamingAnotherResourceJoinsTheTransactionThatLockedIt() {
        String other = resource + "-other";
        Mono<Long> nested = leases.execute(spec.withFence(resource), outer -> fence.advance(other, outer.token())
                .then(leases.execute(spec.withFence(other), inner -> committedFence(other)))
                .as(transactions::transactional));

        assertThat(nested.block(seconds(30))).as("committed fence of the other resource seen in the nested section")
                .isEqualTo(-1L);
        assertThat(losses).isEmpty();
        assertThat(fenceCalls).as("at grant, then on re-entry").hasValue(2);
        assertThat(fence.current(resource).block(seconds(30))).isEqualTo(lastToken());
        assertThat(fence.current(other).block(seconds(30))).isEqualTo(lastToken());
    }

    /**
     * A stale holder paused inside its own fenced transaction keeps the fence row locked: the successor's fence at
     * grant waits for it no longer than the successor's lease is valid, then the lease is given up and the name freed.
     */
    @Test
    void aFenceAtGrantWaitingForAStaleHoldersRowLockGivesUpWithinTheValidity() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        Sinks.Empty<Void> wakeUp = Sinks.empty();
        CompletableFuture<Void> stale = holdTheLockOf(fence.advance(resource, new FencingToken(spec.name(), 1)),
                wakeUp);
        AtomicBoolean ran = new AtomicBoolean();
        try {
            Mono<Boolean> successor = leases.execute(spec.withTtl(ttl).withFence(resource),
                    lease -> Mono.fromCallable(() -> ran.getAndSet(true)));

            Throwable failure = successor.then(Mono.<Throwable>empty()).onErrorResume(Mono::just)
                    .block(ttl.plus(seconds(20)));
            assertThat(failure).as("the successor's fence at grant ended within its validity")
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining(spec.name())
                    .cause().isInstanceOf(CannotAcquireLockException.class)
                    .hasMessageContaining("Fence at grant of resource '" + resource + "' for lease '" + spec.name()
                            + "' (token " + lastToken() + ")")
                    .hasMessageContaining("bounded by the lease's validity");
            assertThat(ran).as("the work ran").isFalse();
            assertThat(losses).containsExactly(spec.name() + " " + LossCause.FENCE_REFUSED);
            try (Lease next = engine.acquire(spec)) {
                assertThat(next.isValid()).as("the name was released").isTrue();
            }
        }
        finally {
            wakeUp.tryEmitEmpty();
            stale.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private long lastToken() {
        return backend.lastToken(spec.name()).orElseThrow();
    }

    /** What a connection outside the section's transaction sees: only what was committed; -1 for no row. */
    private Mono<Long> committedFence(String fenced) {
        return Mono.usingWhen(Mono.from(connectionFactory().create()),
                connection -> Mono.from(connection.createStatement("SELECT fence FROM lease_fence WHERE resource = '"
                        + fenced + "'").execute()).flatMap(result -> Mono.from(result.map((row, meta) ->
                                row.get(0, Long.class)))),
                connection -> Mono.from(connection.close())).defaultIfEmpty(-1L);
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
                .then(Mono.<Void>error(new IllegalStateException("rolled back")))
                .as(transactions::transactional)
                .onErrorResume(IllegalStateException.class, rolledBack -> Mono.empty())
                .toFuture();
        assertThat(locked.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the stale holder wrote").isTrue();
        return holder;
    }
}
