package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;

/** The engine groups the renewals that are due into {@link LeaseBackend#renewAll} calls, and keeps every rule. */
class RenewalBatchingTest {

    private static final Log log = LogFactory.getLog(RenewalBatchingTest.class);

    private final BatchingBackend backend = new BatchingBackend();
    private final Events events = new Events();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private LeaseEngine engine = engine(System::nanoTime);

    @AfterEach
    void stop() {
        pool.shutdownNow();
        engine.close();
        backend.hang.countDown();
    }

    private LeaseEngine engine(LongSupplier clock) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return LeaseEngine.builder(BackendRouter.of(routes)).clock(clock).listeners(List.of(events)).build();
    }

    private static LeaseSpec spec(String name, Duration ttl, Duration renewEvery) {
        return LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(ttl).withRenewEvery(renewEvery);
    }

    /** A section per name whose work blocks until interrupted; returns when every one is inside. */
    private Map<String, Section> sections(Duration ttl, Duration renewEvery, String... names) throws Exception {
        Map<String, Section> sections = new ConcurrentHashMap<>();
        for (String name : names) {
            BlockingWork work = new BlockingWork();
            sections.put(name, new Section(work, pool.submit(() -> engine.execute(spec(name, ttl, renewEvery), work))));
        }
        for (Section section : sections.values()) {
            assertThat(section.work.awaitStarted(seconds(10))).isTrue();
        }
        return sections;
    }

    private static void assertLost(Section section, String reason) {
        assertThatThrownBy(() -> section.call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                .hasMessageContaining(reason).hasCauseInstanceOf(InterruptedException.class);
        assertThat(section.work.wasInterrupted()).as("holder interrupted").isTrue();
    }

    private static boolean held(Section section) {
        return !section.call.isDone() && !section.work.wasInterrupted();
    }

    @Test
    void tenThousandLeasesWithTheSameTimingCostAtMostOneCallPerTwentyLeasesPerInterval() {
        int count = 10_000;
        Duration renewEvery = millis(400);
        List<Lease> leases = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            leases.add(engine.acquire(spec("many-" + i, seconds(4), renewEvery)));
        }
        backend.recordBatches = false;
        // One interval to settle, so that the measure starts in the steady state.
        long settled = backend.grantsRenewed.get() + count;
        await().atMost(seconds(30)).until(() -> backend.grantsRenewed.get() >= settled);

        long calls0 = backend.calls();
        long grants0 = backend.grantsRenewed.get();
        long start = System.nanoTime();
        await().atMost(seconds(60)).until(() -> backend.grantsRenewed.get() - grants0 >= 5L * count);
        double intervals = (System.nanoTime() - start) / (double) renewEvery.toNanos();
        long calls = backend.calls() - calls0;
        double perLeasePerInterval = calls / (count * intervals);
        log.info(count + " leases over " + String.format("%.1f", intervals) + " renewal intervals: " + calls
                + " renewal calls, " + (backend.grantsRenewed.get() - grants0) + " grants renewed, "
                + String.format("%.5f", perLeasePerInterval) + " calls per lease per interval");

        assertThat(perLeasePerInterval).as("renewal calls per lease per interval").isLessThanOrEqualTo(0.05);
        assertThat(backend.renewCalls).as("single renewals").hasValue(0);
        assertThat(leases).as("leases still valid").allMatch(Lease::isValid);
        assertThat(events.lost).as("leases lost").isEmpty();
        assertThat(events.renewedFailed).as("failed renewals").hasValue(0);
        leases.forEach(Lease::close);
    }

    @Test
    void aBackendThatDoesNotRenewInOneCallIsRenewedGrantByGrantEvenThoughItHasARenewAll() {
        backend.oneCall = false;
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            leases.add(engine.acquire(spec("single-" + i, seconds(2), millis(200))));
        }
        await().atMost(seconds(20)).until(() -> backend.renewCalls.get() >= 15);
        assertThat(backend.renewAllCalls).as("renewAll calls").hasValue(0);
        assertThat(leases).allMatch(Lease::isValid);
        leases.forEach(Lease::close);
    }

    @Test
    void anAnswerNamingAGrantThatWasNotInTheCallFailsEveryLeaseOfTheCall() throws Exception {
        Map<String, Section> sections = sections(seconds(3), seconds(1), "confused-1", "confused-2");
        backend.answerForeign = true;
        assertLost(sections.get("confused-1"), "renewal failed");
        assertLost(sections.get("confused-2"), "renewal failed");
    }

    @Test
    void aLeaseReleasedWhileItsBatchIsOutIsNotCountedAsAFailedRenewal() throws Exception {
        Lease lease = engine.acquire(spec("released-meanwhile", seconds(3), seconds(1)));
        backend.hanging = true;
        await().atMost(seconds(10)).until(() -> backend.hangingCalls.get() > 0);
        lease.close();
        backend.failure = new IllegalStateException("the store went away");
        backend.hang.countDown();
        await().atMost(seconds(10)).until(() -> backend.failedIn.size() > 0);
        // The answer is handled right after the call returns, on the same I/O thread: give it a beat to be wrong.
        await().during(millis(300)).atMost(seconds(5)).until(() -> events.renewedFailed.get() == 0);
        assertThat(events.lost).as("leases lost").isEmpty();
    }

    @Test
    void aGrantRenewAllReportsLostIsLostAndItsHolderInterruptedWhileTheRestOfItsBatchStaysHeld() throws Exception {
        Duration ttl = seconds(3);
        Duration renewEvery = seconds(1);
        Map<String, Section> sections = sections(ttl, renewEvery, "kept-1", "refused", "kept-2");
        backend.refuse.add("refused");

        assertLost(sections.get("refused"), "no longer holds this grant");
        List<String> batch = backend.refusedIn.get(0);
        assertThat(batch).as("the call that refused it").contains("refused", "kept-1", "kept-2");
        // Listeners hear of a loss after the holder was interrupted, so possibly after its call returned.
        await().atMost(seconds(10)).until(() -> events.lost.size() >= 1);
        assertThat(events.lost).containsExactly("refused backend-reported");
        assertThat(events.renewedFailedNames).containsExactly("refused");

        // Longer than the ttl: only renewals that go on succeeding keep the others held that long.
        int callsBefore = backend.renewAllCalls.get();
        await().during(ttl.plus(renewEvery)).atMost(ttl.plus(renewEvery).plus(seconds(10)))
                .failFast("another lease of the batch was lost",
                        () -> !held(sections.get("kept-1")) || !held(sections.get("kept-2")))
                .until(() -> held(sections.get("kept-1")) && held(sections.get("kept-2")));
        assertThat(backend.renewAllCalls.get()).as("renewals went on").isGreaterThan(callsBefore);
        assertThat(backend.batches).as("batches after the loss").last().asList()
                .containsExactlyInAnyOrder("kept-1", "kept-2");
    }

    @Test
    void anExceptionFromRenewAllFailsEveryLeaseOfTheBatch() throws Exception {
        Map<String, Section> sections = sections(seconds(3), seconds(1), "a", "b", "c");
        backend.failure = new IllegalStateException("store unreachable");

        for (Section section : sections.values()) {
            assertLost(section, "renewal failed");
        }
        assertThat(backend.failedIn.get(0)).as("the call that failed").containsExactlyInAnyOrder("a", "b", "c");
        // Listeners hear of a loss after the holder was interrupted, so possibly after its call returned.
        await().atMost(seconds(10)).until(() -> events.lost.size() >= 3);
        assertThat(events.lost).containsExactlyInAnyOrder("a renewal-failed", "b renewal-failed", "c renewal-failed");
    }

    @Test
    void aHungRenewAllDoesNotDelayTheLocalDeadline() throws Exception {
        Map<String, Section> sections = sections(seconds(1), millis(300), "hung-1", "hung-2");
        backend.hanging = true;

        for (Section section : sections.values()) {
            assertLost(section, "local validity");
        }
        assertThat(backend.hangingCalls.get()).as("calls still hanging").isPositive();
        // Listeners hear of a loss after the holder was interrupted, so possibly after its call returned.
        await().atMost(seconds(10)).until(() -> events.lost.size() >= 2);
        assertThat(events.lost).containsExactlyInAnyOrder("hung-1 deadline", "hung-2 deadline");
    }

    /** A batch sent before the deadline and answered after it must not make its leases valid again. */
    @Test
    void anAnswerAfterTheLocalValidityRanOutRevivesNoLeaseOfTheBatch() throws Exception {
        engine.close();
        AtomicLong monotonic = new AtomicLong();
        engine = engine(monotonic::get);
        Duration ttl = Duration.ofMinutes(5);
        // Each grant takes two minutes of the manual clock, so its first renewal is due at once.
        backend.duringAcquire = () -> monotonic.addAndGet(Duration.ofMinutes(2).toNanos());
        backend.hanging = true;
        Lease first = engine.acquire(spec("late-1", ttl, Duration.ofSeconds(90)));
        Lease second = engine.acquire(spec("late-2", ttl, Duration.ofSeconds(90)));
        await().atMost(seconds(10)).until(() -> backend.hangingGrants.get() == 2);

        monotonic.addAndGet(Duration.ofMinutes(4).toNanos());
        assertThat(first.isValid()).as("first valid past its deadline").isFalse();
        assertThat(second.isValid()).as("second valid past its deadline").isFalse();
        backend.hang.countDown();

        await().atMost(seconds(10)).until(() -> ((HeldLease) first).isMarkedLost() && ((HeldLease) second).isMarkedLost());
        for (Lease lease : List.of(first, second)) {
            assertThat(lease.isValid()).as("valid again after a late renewal").isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("local validity");
        }
        // Listeners hear of a loss after the holder was interrupted, so possibly after its call returned.
        await().atMost(seconds(10)).until(() -> events.lost.size() >= 2);
        assertThat(events.lost).containsExactlyInAnyOrder("late-1 deadline", "late-2 deadline");
    }

    @Test
    void aClosedLeaseIsLeftOutOfLaterBatches() throws Exception {
        Lease closed = engine.acquire(spec("closed", seconds(2), millis(200)));
        Lease kept = engine.acquire(spec("kept", seconds(2), millis(200)));
        await().atMost(seconds(10)).until(() -> backend.batches.stream().anyMatch(b -> b.contains("closed")));
        closed.close();
        int after = backend.batches.size();

        await().atMost(seconds(10)).until(() -> backend.batches.size() >= after + 2);
        assertThat(backend.batches.get(backend.batches.size() - 1)).containsExactly("kept");
        assertThat(kept.isValid()).isTrue();
        kept.close();
        assertThat(((HeldLease) kept).isClosed()).isTrue();
        assertThat(engine.held()).isEmpty();
        assertThat(engine.renewalsScheduled()).as("renewals left on the schedule").isZero();
    }

    @Test
    void leasesWithDifferentTimingsOnOneBackendAreAllKept() throws Exception {
        Map<String, Section> fast = sections(millis(1200), millis(300), "fast-1", "fast-2");
        Map<String, Section> slow = sections(seconds(5), seconds(2), "slow-1", "slow-2");
        Duration hold = seconds(5);

        await().during(hold).atMost(hold.plus(seconds(10)))
                .failFast("a lease was lost", () -> !fast.values().stream().allMatch(RenewalBatchingTest::held)
                        || !slow.values().stream().allMatch(RenewalBatchingTest::held))
                .until(() -> true);
        // Every lease renewed, the fast ones at least every 300 ms.
        assertThat(events.renewedNames.get("fast-1").get()).isGreaterThanOrEqualTo(10);
        assertThat(events.renewedNames.get("fast-2").get()).isGreaterThanOrEqualTo(10);
        assertThat(events.renewedNames.get("slow-1").get()).isPositive();
        assertThat(events.renewedNames.get("slow-2").get()).isPositive();
        assertThat(events.lost).isEmpty();
    }

    private record Section(BlockingWork work, Future<String> call) {
    }

    /** What the engine told its listener. */
    private static final class Events implements LeaseEngineListener {

        final List<String> lost = new CopyOnWriteArrayList<>();
        final AtomicInteger renewedFailed = new AtomicInteger();
        final List<String> renewedFailedNames = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> renewedNames = new ConcurrentHashMap<>();

        @Override
        public void renewed(LeaseDescription lease, boolean succeeded) {
            if (succeeded) {
                renewedNames.computeIfAbsent(lease.name(), n -> new AtomicInteger()).incrementAndGet();
            }
            else {
                renewedFailed.incrementAndGet();
                renewedFailedNames.add(lease.name());
            }
        }

        @Override
        public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
            lost.add(lease.name() + " " + cause.tag());
        }
    }

    /**
     * A backend that renews in batches and counts its calls, whose answers the test scripts. A test double for the
     * engine, never for a backend.
     */
    private static final class BatchingBackend implements LeaseBackend<BatchingBackend.CountedGrant> {

        final AtomicInteger renewAllCalls = new AtomicInteger();
        final AtomicInteger renewCalls = new AtomicInteger();
        final AtomicLong grantsRenewed = new AtomicLong();
        final AtomicLong tokens = new AtomicLong();
        final AtomicInteger hangingCalls = new AtomicInteger();
        final AtomicInteger hangingGrants = new AtomicInteger();
        final CountDownLatch hang = new CountDownLatch(1);
        final Set<String> refuse = ConcurrentHashMap.newKeySet();
        final List<List<String>> batches = new CopyOnWriteArrayList<>();
        final List<List<String>> refusedIn = new CopyOnWriteArrayList<>();
        final List<List<String>> failedIn = new CopyOnWriteArrayList<>();
        volatile boolean recordBatches = true;
        volatile boolean hanging;
        volatile RuntimeException failure;
        volatile Runnable duringAcquire = () -> { };
        volatile boolean oneCall = true;
        volatile boolean answerForeign;

        long calls() {
            return renewAllCalls.get() + renewCalls.get();
        }

        @Override
        public String id() {
            return "batching";
        }

        @Override
        public BackendTraits traits() {
            return BackendTraits.fenced().withBoundsCallsByDeadline(true).withRenewsInOneCall(oneCall);
        }

        @Override
        public Optional<CountedGrant> tryAcquire(GrantRequest request) {
            duringAcquire.run();
            return Optional.of(new CountedGrant(request.name(), tokens.incrementAndGet()));
        }

        @Override
        public boolean renew(CountedGrant grant) {
            renewCalls.incrementAndGet();
            return true;
        }

        @Override
        public Set<CountedGrant> renewAll(Collection<CountedGrant> grants) throws InterruptedException {
            renewAllCalls.incrementAndGet();
            List<String> names = grants.stream().map(CountedGrant::name).toList();
            if (recordBatches) {
                batches.add(names);
            }
            if (hanging) {
                hangingCalls.incrementAndGet();
                hangingGrants.addAndGet(grants.size());
                hang.await();
            }
            RuntimeException fails = failure;
            if (fails != null) {
                failedIn.add(names);
                throw fails;
            }
            grantsRenewed.addAndGet(grants.size());
            if (answerForeign) {
                return Set.of(new CountedGrant("never-asked", -1));
            }
            Set<CountedGrant> lost = grants.stream().filter(g -> refuse.contains(g.name())).collect(Collectors.toSet());
            if (!lost.isEmpty()) {
                refusedIn.add(names);
            }
            return lost;
        }

        @Override
        public void release(CountedGrant grant) {
        }

        record CountedGrant(String name, long value) implements Grant {

            @Override
            public OptionalLong token() {
                return OptionalLong.of(value);
            }
        }
    }
}
