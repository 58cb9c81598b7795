package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * Local handover: threads of one engine waiting for the same name queue behind one that asks the store, and a local
 * release wakes the next of them at once. Each holder still gets its own grant and token from the store.
 */
class LocalHandoverTest {

    private static final String NAME = "handover";

    private final CountingBackend<?> store = CountingBackend.over(new InMemoryLeaseBackend());
    private final LeaseEngine engine = LeaseEngineTest.engineOver(store);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
        engine.close();
    }

    private static LeaseSpec waitingFor(Duration waitFor) {
        return LeaseSpec.of(NAME, LeaseKind.CORRECTNESS).withWaitFor(waitFor);
    }

    /** Waits until the thread waits with a timeout: queued, or (without local queues) waiting for the store. */
    private static void awaitParked(AtomicReference<Thread> thread) {
        await().atMost(seconds(10)).pollInterval(millis(5))
                .until(() -> thread.get() != null && thread.get().getState() == Thread.State.TIMED_WAITING);
    }

    @ParameterizedTest
    @ValueSource(ints = { 8, 64 })
    void waitersTakeTurnsWithOneGrantRequestPerHandover(int waiters) throws Exception {
        int rounds = waiters == 8 ? 25 : 5;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong(Long.MIN_VALUE);
        AtomicInteger tokenRegressions = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(waiters);
        List<Future<?>> threads = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            threads.add(pool.submit(() -> {
                start.await();
                for (int r = 0; r < rounds; r++) {
                    engine.execute(waitingFor(seconds(120)), lease -> {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        long token = lease.token().value();
                        // Under the lease, so read-then-write is exclusive unless exclusion is broken (counted above).
                        if (token <= lastToken.get()) {
                            tokenRegressions.incrementAndGet();
                        }
                        lastToken.set(token);
                        // Hold it a moment, so that the others are waiting when it is released.
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                        inside.decrementAndGet();
                        return null;
                    });
                }
                return null;
            }));
        }
        for (Future<?> thread : threads) {
            thread.get(seconds(120).toMillis(), TimeUnit.MILLISECONDS);
        }
        int grants = waiters * rounds;
        assertThat(overlaps).hasValue(0);
        assertThat(tokenRegressions).hasValue(0);
        assertThat(store.grants).hasValue(grants);
        // Without local queues every release wakes every waiter, which then asks the store: about `waiters` requests
        // per handover. With them: one, plus a second in the fair turns (one handover in MAX_LOCAL_STREAK).
        assertThat(store.tryAcquires.get()).as("grant requests for %d grants", grants)
                .isLessThanOrEqualTo(2 * grants + waiters);
        assertThat(engine.localLines()).isZero();
    }

    @Test
    void aReleaseThatHangsFreesTheQueueOnceTheGrantMayHaveExpiredAtTheStore() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        // Taken with a wait, so that it heads the local line and the waiter queues behind it.
        LeaseSpec shortLived = waitingFor(seconds(1)).withTtl(millis(900)).withRenewEvery(millis(300));
        Lease first = engine.acquire(shortLived);
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        Future<Lease> waiter = pool.submit(() -> {
            waiterThread.set(Thread.currentThread());
            return engine.acquire(waitingFor(seconds(60)));
        });
        await().atMost(seconds(10)).pollInterval(millis(5))
                .until(() -> engine.locallyQueued(LeaseKind.CORRECTNESS, NAME) >= 1);
        store.releaseGate = gate;
        try {
            Future<?> closing = pool.submit(first::close);
            // The release never returns; the store lets the grant expire after its ttl, and then the queued waiter
            // must be let go to ask the store (before the fix it stayed parked until the release came back).
            assertFreedBehindTheHangingRelease(first, closing, waiter);
        }
        finally {
            store.releaseGate = null;
            gate.countDown();
        }
    }

    /** The waiter got the name (with a higher token) while the release of {@code first} still hangs. */
    private void assertFreedBehindTheHangingRelease(Lease first, Future<?> closing, Future<Lease> waiter)
            throws Exception {
        Lease next = waiter.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        store.releaseGate = null;
        assertThat(next.token().value()).isGreaterThan(first.token().value());
        assertThat(closing).isNotDone();
        next.close();
    }

    @Test
    void aWaiterThatQueuesBehindAReleaseAlreadyHangingIsFreedOnceTheGrantMayHaveExpired() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        LeaseSpec shortLived = waitingFor(seconds(1)).withTtl(millis(900)).withRenewEvery(millis(300));
        Lease first = engine.acquire(shortLived);
        store.releaseGate = gate;
        try {
            // Nobody waits here when the release begins, so it arms no fallback of its own: the waiter that queues
            // while it hangs must arm it (before, every release scheduled one on the timer, on the handover's path).
            AtomicReference<Thread> closer = new AtomicReference<>();
            Future<?> closing = pool.submit(() -> {
                closer.set(Thread.currentThread());
                first.close();
            });
            await().atMost(seconds(10)).pollInterval(millis(5))
                    .until(() -> closer.get() != null && closer.get().getState() == Thread.State.WAITING);
            Future<Lease> waiter = pool.submit(() -> engine.acquire(waitingFor(seconds(60))));
            assertFreedBehindTheHangingRelease(first, closing, waiter);
        }
        finally {
            store.releaseGate = null;
            gate.countDown();
        }
    }

    @Test
    void aQueuedWaiterGivesUpAtItsOwnDeadlineWithoutBlockingTheOnesBehindIt() throws Exception {
        Lease elsewhere = engine.acquire(waitingFor(Duration.ZERO));
        AtomicReference<Thread> headThread = new AtomicReference<>();
        Future<Lease> head = pool.submit(() -> {
            headThread.set(Thread.currentThread());
            return engine.acquire(waitingFor(seconds(120)));
        });
        await().atMost(seconds(10)).until(() -> headThread.get() != null && store.tryAcquiresBy(headThread.get()) > 0);

        AtomicReference<Thread> shortThread = new AtomicReference<>();
        Future<Lease> impatient = pool.submit(() -> {
            shortThread.set(Thread.currentThread());
            return engine.acquire(waitingFor(seconds(3)));
        });
        awaitParked(shortThread);
        assertThat(store.tryAcquiresBy(shortThread.get())).as("grant requests of the queued waiter").isZero();
        assertThat(engine.locallyQueued(LeaseKind.CORRECTNESS, NAME)).isEqualTo(1);
        Future<String> behind = pool.submit(() -> engine.execute(waitingFor(seconds(120)), lease -> "behind"));
        // Behind the impatient one, which is still queued: its deadline is seconds away.
        await().atMost(seconds(10)).pollInterval(millis(5))
                .until(() -> engine.locallyQueued(LeaseKind.CORRECTNESS, NAME) == 2);

        assertThatThrownBy(() -> impatient.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(LeaseUnavailableException.class)
                .hasMessageContaining(NAME);
        assertThat(store.tryAcquiresBy(shortThread.get())).as("grant requests of the queued waiter").isZero();
        assertThat(head).isNotDone();
        assertThat(engine.locallyQueued(LeaseKind.CORRECTNESS, NAME)).isEqualTo(1);

        elsewhere.close();
        Lease headLease = head.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        long headToken = headLease.token().value();
        assertThat(headToken).isGreaterThan(elsewhere.token().value());
        headLease.close();
        assertThat(behind.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("behind");
        await().atMost(seconds(10)).until(() -> engine.localLines() == 0);
    }

    @Test
    void anInterruptedQueuedWaiterLeavesTheQueueAndKeepsItsInterrupt() throws Exception {
        Lease elsewhere = engine.acquire(waitingFor(Duration.ZERO));
        Future<Lease> head = pool.submit(() -> engine.acquire(waitingFor(seconds(120))));
        await().atMost(seconds(10)).until(() -> store.tryAcquires.get() >= 2);

        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread queued = new Thread(() -> {
            try {
                engine.acquire(waitingFor(seconds(120))).close();
            }
            catch (Throwable ex) {
                failure.set(ex);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        }, "queued-waiter");
        queued.start();
        awaitParked(new AtomicReference<>(queued));
        assertThat(store.tryAcquiresBy(queued)).as("grant requests of the queued waiter").isZero();
        assertThat(engine.locallyQueued(LeaseKind.CORRECTNESS, NAME)).isEqualTo(1);
        Future<String> behind = pool.submit(() -> engine.execute(waitingFor(seconds(120)), lease -> "behind"));
        await().atMost(seconds(10)).until(() -> engine.locallyQueued(LeaseKind.CORRECTNESS, NAME) == 2);

        queued.interrupt();
        queued.join(seconds(20).toMillis());
        assertThat(queued.isAlive()).isFalse();
        assertThat(failure.get()).isInstanceOf(LeaseUnavailableException.class)
                .hasMessageContaining(NAME).hasCauseInstanceOf(InterruptedException.class);
        assertThat(stillInterrupted.get()).isTrue();
        assertThat(store.tryAcquiresBy(queued)).isZero();
        assertThat(engine.locallyQueued(LeaseKind.CORRECTNESS, NAME)).isEqualTo(1);

        elsewhere.close();
        head.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS).close();
        assertThat(behind.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("behind");
        await().atMost(seconds(10)).until(() -> engine.localLines() == 0);
    }

    @Test
    void closingTheEngineFailsQueuedWaitersWithTheShutdownOutcome() throws Exception {
        Lease elsewhere = engine.acquire(waitingFor(Duration.ZERO));
        Future<Lease> head = pool.submit(() -> engine.acquire(waitingFor(seconds(120))));
        await().atMost(seconds(10)).until(() -> store.tryAcquires.get() >= 2);
        List<Future<Lease>> queued = new ArrayList<>();
        List<AtomicReference<Thread>> queuedThreads = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            AtomicReference<Thread> thread = new AtomicReference<>();
            queuedThreads.add(thread);
            queued.add(pool.submit(() -> {
                thread.set(Thread.currentThread());
                return engine.acquire(waitingFor(seconds(120)));
            }));
        }
        for (AtomicReference<Thread> thread : queuedThreads) {
            awaitParked(thread);
            assertThat(store.tryAcquiresBy(thread.get())).as("grant requests of a queued waiter").isZero();
        }
        assertThat(engine.locallyQueued(LeaseKind.CORRECTNESS, NAME)).isEqualTo(3);
        int requestsBefore = store.tryAcquires.get();

        engine.close();

        for (Future<Lease> waiter : queued) {
            assertThatThrownBy(() -> waiter.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LeaseUnavailableException.class)
                    .hasMessageContaining(NAME).hasMessageContaining("shutting down");
        }
        assertThatThrownBy(() -> head.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining("shutting down");
        // Only the head may have asked again (at most once more, before it saw the engine closing).
        assertThat(store.tryAcquires.get()).isLessThanOrEqualTo(requestsBefore + 1);
        assertThat(elsewhere.isValid()).isFalse();
    }

    @Test
    void aLossHandsTheNameToTheNextLocalWaiterBeforeTheLoserReturns() throws Exception {
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        CountingBackend<?> counted = CountingBackend.over(memory);
        try (LeaseEngine own = LeaseEngineTest.engineOver(counted)) {
            Lease first = own.acquire(waitingFor(seconds(120)));
            Future<Lease> next = pool.submit(() -> own.acquire(waitingFor(seconds(120))));
            await().atMost(seconds(10)).until(() -> own.locallyQueued(LeaseKind.CORRECTNESS, NAME) == 1);

            memory.revoke(NAME);

            // The loser has not returned (its lease is not closed), yet the waiter asks the store and gets its own grant.
            Lease second = next.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(first.isValid()).isFalse();
            assertThat(second.token().value()).isGreaterThan(first.token().value());
            first.close();
            assertThat(second.isValid()).isTrue();
            second.close();
        }
    }

    @Test
    void aThreadAskingAgainForANameItHoldsDoesNotQueueBehindItself() throws Exception {
        String result = engine.execute(waitingFor(seconds(120)), outer -> {
            // As before local queues: the store says busy until the wait ends.
            assertThatThrownBy(() -> engine.acquire(waitingFor(millis(200))))
                    .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining(NAME);
            String inner = engine.execute(waitingFor(seconds(120)), same -> same == outer ? "re-entered" : "other");
            try (Lease other = engine.acquire(LeaseSpec.of("other", LeaseKind.CORRECTNESS).withWaitFor(seconds(5)))) {
                return inner + ", other " + other.isValid();
            }
        });
        assertThat(result).isEqualTo("re-entered, other true");
        assertThat(engine.localLines()).isZero();
    }

    @Test
    void aWaiterOfAnotherEngineGetsTheNameWhileThisEngineHasWaitersAllTheTime() throws Exception {
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        try (LeaseEngine busy = LeaseEngineTest.engineOver(memory);
                LeaseEngine other = LeaseEngineTest.engineOver(memory)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger busyGrants = new AtomicInteger();
            List<Future<?>> hogs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                hogs.add(pool.submit(() -> {
                    while (!stop.get()) {
                        busy.execute(waitingFor(seconds(120)), lease -> {
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                            return busyGrants.incrementAndGet();
                        });
                    }
                    return null;
                }));
            }
            await().atMost(seconds(10)).until(() -> busyGrants.get() > 20);
            for (int i = 0; i < 5; i++) {
                String turn = other.execute(waitingFor(seconds(60)), lease -> "turn");
                assertThat(turn).isEqualTo("turn");
            }
            stop.set(true);
            for (Future<?> hog : hogs) {
                hog.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }
}
