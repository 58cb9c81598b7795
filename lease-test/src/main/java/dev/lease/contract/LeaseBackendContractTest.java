package dev.lease.contract;

import static dev.lease.testing.TestTiming.scaled;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;

/**
 * What every backend must do, run against a real server. A backend test extends this class and says how to
 * reach its backend, how a second process would, and how to take a lease away behind its holder's back.
 *
 * @param <G> the backend's grant type
 */
public abstract class LeaseBackendContractTest<G extends Grant> {

    /** The backend under test, as one application instance sees it. */
    protected abstract LeaseBackend<G> backend();

    /**
     * The same store as seen by another application instance (its own client and connection). Defaults to
     * {@link #backend()} for stores that only live in one process.
     */
    protected LeaseBackend<G> secondBackend() {
        return backend();
    }

    /** Takes the named lease away from its holder behind its back (delete the key, znode or row). */
    protected abstract void breakLease(String name) throws Exception;

    /**
     * Makes {@code grant} expire on the store, as if its holder paused past its ttl. The default does nothing:
     * the grant's ttl runs out by itself. Backends whose expiry is not per grant (a ZooKeeper session) override it.
     */
    protected void letExpire(G grant) throws Exception {
    }

    /** A ttl short enough to expire within a test and long enough to survive a slow machine's renewals. */
    protected Duration shortTtl() {
        return scaled(Duration.ofMillis(1500));
    }

    protected LeaseEngine engine;
    private String testName;

    @BeforeEach
    void startEngine(TestInfo info) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.EFFICIENCY, backend());
        if (backend().traits().issuesFencingTokens()) {
            routes.put(LeaseKind.CORRECTNESS, backend());
        }
        engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        testName = info.getTestMethod().map(m -> m.getName()).orElse("test") + "-" + System.nanoTime();
    }

    @AfterEach
    void stopEngine() {
        engine.close();
    }

    /** A lease name no other test uses. */
    protected String uniqueName() {
        return "contract-" + testName;
    }

    /** The strongest kind this backend serves. */
    protected LeaseKind kind() {
        return backend().traits().issuesFencingTokens() ? LeaseKind.CORRECTNESS : LeaseKind.EFFICIENCY;
    }

    /**
     * Eight threads split over two application instances (one engine on {@link #backend()}, one on
     * {@link #secondBackend()}) update an unguarded counter under the lease: no update may be lost, no two holders
     * may be inside at once, and tokens must strictly increase in the order the holders got in.
     */
    @Test
    void mutualExclusionUnderContention() throws Exception {
        String name = uniqueName();
        int threads = 8;
        int rounds = 15;
        int[] unguarded = {0};
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Long> tokensInGrantOrder = Collections.synchronizedList(new ArrayList<>());
        LeaseSpec spec = LeaseSpec.of(name, kind()).withTtl(seconds(10)).withWaitFor(seconds(60));
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                LeaseEngine instance = engineFor(t % 2 == 0 ? backend() : secondBackend());
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        instance.execute(spec, lease -> {
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            if (lease.hasToken()) {
                                tokensInGrantOrder.add(lease.token().value());
                            }
                            int seen = unguarded[0];
                            Thread.yield();
                            unguarded[0] = seen + 1;
                            inside.decrementAndGet();
                            return null;
                        });
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(seconds(120).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
        assertThat(maxInside.get()).as("holders inside the section at once").isEqualTo(1);
        assertThat(unguarded[0]).as("unguarded counter, updates lost under contention").isEqualTo(threads * rounds);
        if (backend().traits().issuesFencingTokens()) {
            assertThat(tokensInGrantOrder).hasSize(threads * rounds);
            assertStrictlyIncreasing(tokensInGrantOrder);
        }
    }

    @Test
    void tokensStrictlyIncreaseAcrossGrants() {
        assumeThat(backend().traits().issuesFencingTokens()).as("backend issues fencing tokens").isTrue();
        String name = uniqueName();
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            LeaseBackend<G> side = i % 2 == 0 ? backend() : secondBackend();
            try (Lease lease = engineFor(side).acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS))) {
                tokens.add(lease.token().value());
            }
        }
        assertStrictlyIncreasing(tokens);
    }

    @Test
    void onlyOneGrantAtATimeAcrossInstances() throws Exception {
        String name = uniqueName();
        G first = grant(backend(), name, seconds(30)).orElseThrow();
        try {
            assertThat(grant(secondBackend(), name, seconds(30))).as("second instance while held").isEmpty();
            assertThat(grant(backend(), name, seconds(30))).as("same instance while held").isEmpty();
        }
        finally {
            backend().release(first);
        }
        G second = grant(secondBackend(), name, seconds(30)).orElseThrow();
        secondBackend().release(second);
    }

    /** A batch renewal renews every grant still held and names exactly those taken away. */
    @Test
    void aBatchRenewalNamesExactlyTheGrantsNoLongerHeld() throws Exception {
        List<G> grants = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            grants.add(grant(backend(), uniqueName() + "-batch-" + i, seconds(30)).orElseThrow());
        }
        try {
            assertThat(backend().renewAll(grants)).as("lost while all are held").isEmpty();
            breakLease(grants.get(1).name());
            assertThat(backend().renewAll(grants)).as("lost after one was taken away").containsExactly(grants.get(1));
            assertThat(grant(secondBackend(), grants.get(0).name(), seconds(30))).as("renewed, still held").isEmpty();
        }
        finally {
            for (G grant : grants) {
                backend().release(grant);
            }
        }
    }

    @Test
    void expiryThenTakeoverWithHigherToken() throws Exception {
        String name = uniqueName();
        G stale = grant(backend(), name, shortTtl()).orElseThrow();
        letExpire(stale);
        AtomicReference<G> successor = new AtomicReference<>();
        await().atMost(shortTtl().multipliedBy(3).plus(seconds(10))).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    grant(secondBackend(), name, seconds(30)).ifPresent(successor::set);
                    return successor.get() != null;
                });
        try {
            if (backend().traits().issuesFencingTokens()) {
                assertThat(successor.get().token().getAsLong()).isGreaterThan(stale.token().getAsLong());
            }
            assertThat(secondBackend().renew(successor.get())).as("successor renews").isTrue();
        }
        finally {
            secondBackend().release(successor.get());
        }
    }

    @Test
    void anExpiredHolderCanNeitherReleaseNorRenewItsSuccessorsLease() throws Exception {
        String name = uniqueName();
        G stale = grant(backend(), name, shortTtl()).orElseThrow();
        letExpire(stale);
        AtomicReference<G> successor = new AtomicReference<>();
        await().atMost(shortTtl().multipliedBy(3).plus(seconds(10))).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    grant(secondBackend(), name, seconds(30)).ifPresent(successor::set);
                    return successor.get() != null;
                });
        try {
            try {
                backend().release(stale);
            }
            catch (Exception ignored) {
                // A backend may also refuse loudly; what matters is that the successor keeps the lease.
            }
            boolean renewedStale;
            try {
                renewedStale = backend().renew(stale);
            }
            catch (Exception refused) {
                renewedStale = false;
            }
            assertThat(renewedStale).as("stale holder renews").isFalse();
            assertThat(grant(backend(), name, seconds(30))).as("lease free after stale release").isEmpty();
            assertThat(secondBackend().renew(successor.get())).as("successor still holds it").isTrue();
        }
        finally {
            secondBackend().release(successor.get());
        }
    }

    @Test
    void renewalKeepsALeaseWellPastItsTtl() throws Exception {
        String name = uniqueName();
        Duration ttl = shortTtl();
        try (Lease lease = engine.acquire(LeaseSpec.of(name, kind()).withTtl(ttl))) {
            long until = System.nanoTime() + ttl.multipliedBy(3).toNanos();
            while (System.nanoTime() - until < 0) {
                assertThat(lease.isValid()).as("lease valid while renewed").isTrue();
                assertThat(grant(secondBackend(), name, seconds(30))).as("taken by another instance").isEmpty();
                Thread.sleep(100);
            }
            assertThat(lease.remaining()).isPositive();
        }
    }

    @Test
    void lossInterruptsTheHolderAndTheCallerGetsLeaseLostException() throws Exception {
        String name = uniqueName();
        Duration ttl = shortTtl();
        BlockingWork work = new BlockingWork();
        AtomicBoolean interruptLeftAfter = new AtomicBoolean(true);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> call = pool.submit(() -> {
                try {
                    return engine.execute(LeaseSpec.of(name, kind()).withTtl(ttl).withWaitFor(seconds(10)), work);
                }
                finally {
                    interruptLeftAfter.set(Thread.currentThread().isInterrupted());
                }
            });
            assertThat(work.awaitStarted(seconds(30))).isTrue();
            breakLease(name);
            assertThatThrownBy(() -> call.get(ttl.multipliedBy(2).plus(seconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining(name)
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(work.wasInterrupted()).as("holder interrupted").isTrue();
            assertThat(interruptLeftAfter).as("interrupt left on the thread after the section").isFalse();
        }
        finally {
            pool.shutdownNow();
        }
    }

    /**
     * {@code holdAtLeast} through the engine: a section that ends at once leaves its lease held until the hold has
     * passed since its grant, busy for another instance meanwhile, and free then.
     */
    @Test
    void aLeaseHeldAtLeastStaysBusyUntilItsHoldHasPassedSinceItsGrant() throws Exception {
        String name = uniqueName();
        Duration hold = seconds(1);
        LeaseSpec spec = LeaseSpec.of(name, kind()).withTtl(seconds(10));
        long before = System.nanoTime();
        engine.execute(spec.withHoldAtLeast(hold), lease -> null);
        Optional<G> during = grant(secondBackend(), name, seconds(30));
        boolean withinHold = System.nanoTime() - before < hold.toNanos();
        if (during.isPresent()) {
            secondBackend().release(during.get());
        }
        assertThat(during.isPresent() && withinHold).as("granted to another instance within the hold").isFalse();

        LeaseEngine other = engineFor(secondBackend());
        Lease next = await().atMost(hold.plus(seconds(30))).pollInterval(Duration.ofMillis(50))
                .until(() -> other.tryAcquire(spec).orElse(null), granted -> granted != null);
        long grantedAgainAfter = System.nanoTime() - before;
        next.close();
        assertThat(grantedAgainAfter).as("granted again no sooner than the hold after the first grant")
                .isGreaterThanOrEqualTo(hold.toNanos());
    }

    /** An engine over {@code backend} alone (one per backend), closed with this test's engine. */
    private LeaseEngine engineFor(LeaseBackend<?> backend) {
        if (backend == backend()) {
            return engine;
        }
        return others.computeIfAbsent(backend, b -> {
            Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
            routes.put(LeaseKind.EFFICIENCY, b);
            routes.put(LeaseKind.CORRECTNESS, b);
            return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        });
    }

    private final Map<LeaseBackend<?>, LeaseEngine> others = new java.util.concurrent.ConcurrentHashMap<>();

    /** Forgotten as well as closed: a test class with one instance for all its tests (PER_CLASS) gets new ones. */
    @AfterEach
    void stopOtherEngines() {
        others.values().forEach(LeaseEngine::close);
        others.clear();
    }

    protected static <T extends Grant> Optional<T> grant(LeaseBackend<T> backend, String name, Duration ttl)
            throws Exception {
        return backend.tryAcquire(new GrantRequest(name, ttl, reason -> { }));
    }

    protected static void assertStrictlyIncreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d after %s", i, tokens.subList(0, i)).isGreaterThan(tokens.get(i - 1));
        }
    }
}
