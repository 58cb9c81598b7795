package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A waiter's grant request follows the store's release signal in the same call: on the thread that saw the release
 * (no hand-off back to the caller and out again, which every handover paid twice), never on a timer while the wait
 * runs, never after the caller gave up, and with the lease's validity counted from the request, not from the wait.
 */
class WaitThenGrantTest {

    private static final String NAME = "wait-then-grant";

    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private final ExecutorService caller = Executors.newSingleThreadExecutor();
    private GatedWaits<?> store;
    private LeaseEngine engine;

    @AfterEach
    void stop() {
        store.gate.countDown();
        caller.shutdownNow();
        if (engine != null) {
            engine.close();
        }
    }

    private void start(boolean boundsItsCalls) {
        store = new GatedWaits<>(memory, boundsItsCalls);
        engine = LeaseEngineTest.engineOver(store);
    }

    /** Someone else holds the name, straight at the store; the returned action releases it. */
    private Runnable heldElsewhere() {
        return holdAt(memory);
    }

    private static <G extends Grant> Runnable holdAt(LeaseBackend<G> backend) {
        G grant;
        try {
            grant = backend.tryAcquire(new GrantRequest(NAME, seconds(60), reason -> { })).orElseThrow();
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
        return () -> {
            try {
                backend.release(grant);
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        };
    }

    private Future<Optional<Lease>> waitFor(Duration waitFor, Duration ttl) {
        return caller.submit(() -> engine.tryAcquire(
                LeaseSpec.of(NAME, LeaseKind.CORRECTNESS).withWaitFor(waitFor).withTtl(ttl)));
    }

    @ParameterizedTest(name = "backend bounds its calls: {0}")
    @ValueSource(booleans = { false, true })
    void theGrantRequestFollowsTheReleaseOnTheThreadThatSawIt(boolean boundsItsCalls) throws Exception {
        start(boundsItsCalls);
        Runnable releaseOther = heldElsewhere();
        Future<Optional<Lease>> waiting = waitFor(seconds(30), seconds(30));
        await().atMost(seconds(10)).until(() -> store.waitsEntered.size() == 1);
        // The release signal is late (a slow watch, a wait outlasting its pause): the store is not asked again
        // before it comes. The engine used to ask again once the pause and a grace period had passed.
        await().during(millis(400)).atMost(seconds(5)).until(() -> store.tryAcquireThreads.size() == 1);

        releaseOther.run();
        store.gate.countDown();

        assertThat(waiting.get(10, TimeUnit.SECONDS)).isPresent();
        assertThat(store.tryAcquireThreads).hasSize(2);
        assertThat(store.tryAcquireThreads.get(1)).as("the thread that asked after the release")
                .isSameAs(store.waitsEntered.get(0));
    }

    @Test
    void nothingIsSentOnceTheCallerGaveUp() throws Exception {
        start(false);
        heldElsewhere();
        Future<Optional<Lease>> waiting = waitFor(millis(200), seconds(30));
        await().atMost(seconds(10)).until(() -> store.waitsEntered.size() == 1);

        Throwable given = null;
        try {
            waiting.get(30, TimeUnit.SECONDS);
        }
        catch (java.util.concurrent.ExecutionException ex) {
            given = ex.getCause();
        }
        assertThat(given).as("a wait that outlasts the caller's time").isInstanceOf(LeaseUnavailableException.class);
        store.gate.countDown();
        await().atMost(seconds(10)).untilTrue(store.waitReturned);
        await().during(millis(300)).atMost(seconds(5)).until(() -> store.tryAcquireThreads.size() == 1);
    }

    @ParameterizedTest(name = "backend bounds its calls: {0}")
    @ValueSource(booleans = { false, true })
    void validityCountsFromTheRequestNotFromTheWaitBeforeIt(boolean boundsItsCalls) throws Exception {
        start(boundsItsCalls);
        Duration ttl = seconds(4);
        Duration wait = millis(1500);
        Runnable releaseOther = heldElsewhere();
        Future<Optional<Lease>> waiting = waitFor(seconds(30), ttl);
        await().atMost(seconds(10)).until(() -> store.waitsEntered.size() == 1);
        Thread.sleep(wait.toMillis()); // time passing in the wait is the subject here, not a hope

        releaseOther.run();
        store.gate.countDown();

        Lease lease = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(lease.remaining()).as("validity left right after the grant")
                .isGreaterThan(ttl.minus(wait.dividedBy(2)));
    }

    /**
     * The in-memory store, with a wait for a release that records its thread and returns only when the test opens the
     * gate, whatever its {@code maxWait}: a release signal that comes late.
     */
    private static final class GatedWaits<G extends Grant> extends ForwardingLeaseBackend<G> {

        final CountDownLatch gate = new CountDownLatch(1);
        final List<Thread> waitsEntered = new CopyOnWriteArrayList<>();
        final List<Thread> tryAcquireThreads = new CopyOnWriteArrayList<>();
        final AtomicBoolean waitReturned = new AtomicBoolean();
        private final boolean boundsItsCalls;

        GatedWaits(LeaseBackend<G> store, boolean boundsItsCalls) {
            super(store);
            this.boundsItsCalls = boundsItsCalls;
        }

        @Override
        public BackendTraits traits() {
            return target().traits().withBoundsCallsByDeadline(boundsItsCalls);
        }

        @Override
        public Optional<G> tryAcquire(GrantRequest request) throws Exception {
            tryAcquireThreads.add(Thread.currentThread());
            return target().tryAcquire(request);
        }

        @Override
        public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
            waitsEntered.add(Thread.currentThread());
            try {
                gate.await();
            }
            finally {
                waitReturned.set(true);
            }
        }
    }
}
