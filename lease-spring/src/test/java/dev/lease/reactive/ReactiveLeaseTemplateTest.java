package dev.lease.reactive;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.WhenBusy;
import dev.lease.core.BackendRouter;
import dev.lease.core.HeldLeaseSnapshot;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.GrantFence;

/**
 * {@link ReactiveLeaseTemplate} on the in-memory backend, with Reactor's {@link StepVerifier}: acquired on
 * subscription (not on assembly), released on complete, error and cancel, cancelled with {@link LeaseLostException}
 * on loss, the lease in the Reactor context, waits without a thread, and no store call on a non-blocking thread.
 */
class ReactiveLeaseTemplateTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    /** The bound the backend contract suite gives the interrupt after a loss. */
    private static final Duration LOSS_BOUND = TTL.multipliedBy(2).plus(seconds(10));

    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private final NonBlockingCheck<?> backend = new NonBlockingCheck<>(memory);
    private final LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend,
            LeaseKind.EFFICIENCY, backend)), LeaseDefaults.standard());
    private final ReactiveLeaseTemplate leases = new ReactiveLeaseTemplate(engine);

    @AfterEach
    void closeEngine() {
        engine.close();
        assertThat(backend.violations()).as("store calls made on non-blocking threads").isEmpty();
    }

    private static LeaseSpec spec(String name) {
        return LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(TTL);
    }

    private List<String> held() {
        return engine.held().stream().map(HeldLeaseSnapshot::name).toList();
    }

    @Test
    void acquiresOnSubscriptionHoldsWhileRunningAndReleasesOnComplete() {
        AtomicReference<List<String>> heldInside = new AtomicReference<>();
        Mono<FencingToken> work = leases.execute(spec("report"), lease -> ReactiveLeaseContext.token()
                .doOnNext(token -> heldInside.set(held()))
                .map(token -> {
                    assertThat(token).isEqualTo(lease.token());
                    return token;
                }));
        assertThat(held()).as("nothing acquired on assembly").isEmpty();

        StepVerifier.create(work)
                .assertNext(token -> assertThat(token.value()).isEqualTo(memory.lastToken("report").getAsLong()))
                .verifyComplete();

        assertThat(heldInside.get()).containsExactly("report");
        assertThat(held()).as("released before completion reached the subscriber").isEmpty();
    }

    @Test
    void releasesOnErrorAndPassesTheErrorOn() {
        StepVerifier.create(leases.execute(spec("failing"), lease -> Mono.error(new IllegalStateException("boom"))))
                .expectErrorMatches(ex -> ex instanceof IllegalStateException && ex.getMessage().equals("boom"))
                .verify(seconds(30));
        assertThat(held()).isEmpty();
    }

    @Test
    void releasesOnCancel() {
        AtomicBoolean cancelled = new AtomicBoolean();
        StepVerifier.create(leases.execute(spec("cancelled"), lease -> Mono.never().doOnCancel(() -> cancelled.set(true))))
                .expectSubscription()
                .then(() -> await().atMost(seconds(30)).until(() -> held().contains("cancelled")))
                .thenCancel()
                .verify(seconds(30));
        assertThat(cancelled).isTrue();
        await().atMost(seconds(30)).until(() -> held().isEmpty());
        assertThat(leases.execute(spec("cancelled"), lease -> Mono.just("again")).block(seconds(30))).isEqualTo("again");
    }

    /** Remove the cancellation on loss (the takeUntilOther in ReactiveLeaseTemplate.guarded) and this one fails. */
    @Test
    void lossCancelsTheUpstreamAndSignalsLeaseLostException() {
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        AtomicInteger emitted = new AtomicInteger();
        Flux<Long> ticks = leases.executeMany(spec("import"), lease -> Flux.interval(Duration.ofMillis(20))
                .doOnNext(tick -> emitted.incrementAndGet())
                .doOnCancel(() -> upstreamCancelled.set(true)));

        StepVerifier.create(ticks)
                .expectNextCount(3)
                .then(() -> assertThat(memory.revoke("import")).isTrue())
                .thenConsumeWhile(tick -> true)
                .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LeaseLostException.class)
                        .hasMessageContaining("import").hasMessageContaining("revoked"))
                .verify(LOSS_BOUND);

        await().atMost(seconds(30)).untilTrue(upstreamCancelled);
        int after = emitted.get();
        assertThat(after).isPositive();
        await().pollDelay(millis(200)).atMost(seconds(30)).until(() -> emitted.get() == after);
        await().atMost(seconds(30)).until(() -> held().isEmpty());
    }

    @Test
    void workThatEndsAfterItsLeaseWasLostEndsWithLeaseLostException() {
        StepVerifier.create(leases.execute(spec("late"), lease -> Mono.fromCallable(() -> {
            memory.revoke("late");
            return "produced without the lease";
        })))
                .expectError(LeaseLostException.class)
                .verify(LOSS_BOUND);
    }

    @Test
    void busyLeaseSkipsEmptyOrThrows() throws Exception {
        try (Lease holder = engine.acquire(spec("busy"))) {
            StepVerifier.create(leases.run(spec("busy"), lease -> Flux.just("ran"), WhenBusy.SKIP))
                    .verifyComplete();
            StepVerifier.create(leases.execute(spec("busy"), lease -> Mono.just("ran")))
                    .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LeaseUnavailableException.class)
                            .hasMessageContaining("busy").hasMessageContaining(InMemoryLeaseBackend.ID))
                    .verify(seconds(30));
            assertThat(holder.isValid()).isTrue();
        }
    }

    /**
     * With one thread for blocking calls, a subscriber waiting for a busy lease must leave that thread free: another
     * section gets its lease while the first still waits.
     */
    @Test
    void waitingForABusyLeaseHoldsNoThread() {
        Scheduler oneThread = Schedulers.newBoundedElastic(1, 1000, "lease-blocking");
        try {
            ReactiveLeaseTemplate single = new ReactiveLeaseTemplate(engine, null, oneThread);
            Lease holder = engine.acquire(spec("queue"));
            Mono<String> waiting = single.execute(spec("queue").withWaitFor(seconds(60)), lease -> Mono.just("waited"))
                    .cache();
            waiting.subscribe();
            await().pollDelay(millis(300)).atMost(seconds(30)).until(() -> true);
            assertThat(single.execute(spec("other"), lease -> Mono.just("other ran")).block(seconds(30)))
                    .isEqualTo("other ran");
            holder.close();
            assertThat(waiting.block(seconds(30))).isEqualTo("waited");
        }
        finally {
            oneThread.dispose();
        }
    }

    @Test
    void subscribedOnANonBlockingThreadTheStoreIsCalledElsewhere() {
        AtomicReference<String> subscribedOn = new AtomicReference<>();
        Mono<String> work = leases.execute(spec("parallel"), lease -> Mono.fromCallable(() -> "done"))
                .subscribeOn(Schedulers.parallel())
                .doOnSubscribe(s -> subscribedOn.set(Thread.currentThread().getName()));
        StepVerifier.create(Mono.defer(() -> {
            assertThat(Schedulers.isInNonBlockingThread()).isTrue();
            return work;
        }).subscribeOn(Schedulers.parallel())).expectNext("done").verifyComplete();
        // closeEngine() checks that no grant request nor release ran on the parallel (non-blocking) threads.
    }

    @Test
    void nestedSectionOfTheSameNameReentersItsLeaseAndSeesBothInTheContext() {
        Mono<List<Object>> nested = leases.execute(spec("outer"), outer -> leases.execute(
                LeaseSpec.of("inner", LeaseKind.EFFICIENCY), inner -> leases.execute(spec("outer"),
                        again -> Mono.zip(ReactiveLeaseContext.current(), ReactiveLeaseContext.find("outer"))
                                .map(both -> List.<Object>of(both.getT1().name(), both.getT2() == outer,
                                        again == outer)))));
        StepVerifier.create(nested).expectNext(List.of("inner", true, true)).verifyComplete();
        StepVerifier.create(ReactiveLeaseContext.current()).expectError(IllegalStateException.class).verify();
        StepVerifier.create(ReactiveLeaseContext.find("outer")).verifyComplete();
    }

    @Test
    void reactiveFenceAtGrantRunsBeforeTheWorkAndARefusalIsALoss() {
        Map<String, Long> fences = new ConcurrentHashMap<>();
        ReactiveGrantFence fence = (resource, token) -> Mono.fromRunnable(() -> fences.merge(resource, token.value(),
                (current, presented) -> {
                    if (presented < current) {
                        throw new IllegalStateException("stale token " + presented + " < " + current);
                    }
                    return presented;
                }));
        ReactiveLeaseTemplate fenced = new ReactiveLeaseTemplate(engine, fence);
        LeaseSpec spec = spec("invoice-1").withFence("invoice-1");

        StepVerifier.create(fenced.execute(spec, lease -> Mono.fromCallable(() -> fences.get("invoice-1"))))
                .assertNext(fenceSeenByTheWork -> assertThat(fenceSeenByTheWork)
                        .isEqualTo(memory.lastToken("invoice-1").getAsLong()))
                .verifyComplete();

        fences.put("invoice-1", Long.MAX_VALUE);
        AtomicBoolean ran = new AtomicBoolean();
        StepVerifier.create(fenced.execute(spec, lease -> Mono.fromRunnable(() -> ran.set(true))))
                .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LeaseLostException.class)
                        .hasCauseInstanceOf(IllegalStateException.class))
                .verify(seconds(30));
        assertThat(ran).as("work subscribed after the fence refused").isFalse();
        await().atMost(seconds(30)).until(() -> held().isEmpty());
    }

    /**
     * Without a reactive fence the engine fences at grant; a nested section naming another resource is fenced through
     * the engine too, and the grant's resource is never fenced again.
     */
    @Test
    void aNestedSectionNamingAnotherFenceIsFencedThroughTheEngine() {
        List<String> advanced = new CopyOnWriteArrayList<>();
        LeaseEngine fenced = LeaseEngine.builder(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend)))
                .grantFence(new GrantFence() {
                    @Override
                    public void advanceAtGrant(String resource, FencingToken token) {
                        advanced.add("at grant " + resource);
                    }

                    @Override
                    public void advanceOnReentry(String resource, FencingToken token, Duration validity) {
                        advanced.add("on re-entry " + resource);
                    }
                }).build();
        try {
            ReactiveLeaseTemplate template = new ReactiveLeaseTemplate(fenced);
            LeaseSpec spec = spec("invoice-2");
            StepVerifier.create(template.execute(spec.withFence("invoice-2"),
                    outer -> template.execute(spec.withFence("invoice-2"),
                            again -> template.execute(spec.withFence("ledger-2"), inner -> Mono.just("done")))))
                    .expectNext("done").verifyComplete();
            assertThat(advanced).containsExactly("at grant invoice-2", "on re-entry ledger-2");
        }
        finally {
            fenced.close();
        }
    }

    /** A reactive fence that sets no bound of its own is given up soon after the lease's validity, not waited for. */
    @Test
    void aReactiveFenceAtGrantThatNeverCompletesCostsTheLeaseAfterItsValidity() {
        ReactiveLeaseTemplate fenced = new ReactiveLeaseTemplate(engine, (resource, token) -> Mono.never());
        AtomicBoolean ran = new AtomicBoolean();

        StepVerifier.create(fenced.execute(spec("invoice-3").withFence("invoice-3"),
                lease -> Mono.fromRunnable(() -> ran.set(true))))
                .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LeaseLostException.class)
                        .cause().isInstanceOf(TimeoutException.class)
                        .hasMessageContaining("Fence at grant of resource 'invoice-3' for lease 'invoice-3'")
                        .hasMessageContaining("did not complete within the lease's validity"))
                .verify(TTL.plus(seconds(30)));
        assertThat(ran).isFalse();
        await().atMost(seconds(30)).until(() -> held().isEmpty());
    }
}
