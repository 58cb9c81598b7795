package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;

class LeaseEngineTest {

    private final ScriptedBackend scripted = new ScriptedBackend();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private LeaseEngine engine = engineOver(scripted);

    @AfterEach
    void stop() {
        pool.shutdownNow();
        engine.close();
    }

    static LeaseEngine engineOver(LeaseBackend<?> backend) {
        return engineOver(backend, null);
    }

    static LeaseEngine engineOver(LeaseBackend<?> backend, GrantFence grantFence) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return LeaseEngine.builder(BackendRouter.of(routes)).grantFence(grantFence).build();
    }

    private static LeaseSpec spec(String name) {
        return LeaseSpec.of(name, LeaseKind.CORRECTNESS);
    }

    /** Runs {@code spec} on a pool thread whose work blocks until interrupted; returns when it is inside. */
    private Future<String> blockingSection(LeaseSpec spec) throws InterruptedException {
        BlockingWork work = new BlockingWork();
        Future<String> call = pool.submit(() -> engine.execute(spec, work));
        assertThat(work.awaitStarted(seconds(10))).isTrue();
        return call;
    }

    private static void assertLost(Future<String> call, String reason) {
        assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining(reason)
                .hasCauseInstanceOf(InterruptedException.class);
    }

    @Test
    void aFailedRenewalIsALossAtOnceWithoutRetrying() throws Exception {
        scripted.renewal.set(ScriptedBackend.Renewal.FAIL);
        Future<String> call = blockingSection(spec("fail").withTtl(Duration.ofSeconds(30)).withRenewEvery(Duration.ofMillis(200)));
        assertLost(call, "renewal failed");
        assertThat(scripted.renewals).as("renewal attempts").hasValue(1);
    }

    @Test
    void aStoreThatHangsOnReleaseDoesNotDelayTheLeaseLostException() throws Exception {
        scripted.releaseBlocks = true;
        Future<String> call = blockingSection(spec("hung-release").withTtl(Duration.ofMinutes(5)));
        scripted.lastListener.get().leaseLost("connection dropped");
        assertLost(call, "connection dropped");
        await().atMost(seconds(10)).untilAsserted(() -> assertThat(scripted.releases).hasValue(1));
        scripted.hang.countDown();
    }

    @Test
    void aRefusedRenewalIsALoss() throws Exception {
        scripted.renewal.set(ScriptedBackend.Renewal.REFUSE);
        Future<String> call = blockingSection(spec("refused").withTtl(Duration.ofSeconds(30)).withRenewEvery(Duration.ofMillis(200)));
        assertLost(call, "no longer holds this grant");
    }

    @Test
    void aHangingRenewalCannotOutliveTheLocalDeadline() throws Exception {
        scripted.renewal.set(ScriptedBackend.Renewal.HANG);
        Future<String> call = blockingSection(spec("hang").withTtl(Duration.ofMillis(900)).withRenewEvery(Duration.ofMillis(300)));
        assertLost(call, "local validity");
        scripted.hang.countDown();
    }

    @Test
    void aLossReportedByTheBackendInterruptsWithoutWaitingForRenewal() throws Exception {
        Future<String> call = blockingSection(spec("session").withTtl(Duration.ofMinutes(10)));
        scripted.lastListener.get().leaseLost("session suspended");
        assertLost(call, "session suspended");
        assertThat(scripted.renewals).as("no renewal was due").hasValue(0);
    }

    @Test
    void aLossReportedWhileTheGrantWasBeingReturnedStopsTheWorkBeforeItStarts() {
        scripted.lossDuringAcquire = "connection dropped during the request";
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> engine.execute(spec("early"), lease -> {
            ran.set(true);
            return "ran";
        })).isInstanceOf(LeaseLostException.class).hasMessageContaining("connection dropped");
        assertThat(ran).as("work started with a lease already lost").isFalse();
    }

    @Test
    void aGrantSlowerThanItsTtlNeverRunsTheWork() {
        scripted.acquireDelay = Duration.ofMillis(400);
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> engine.execute(spec("slow").withTtl(Duration.ofMillis(300))
                .withRenewEvery(Duration.ofMillis(100)), lease -> {
                    ran.set(true);
                    return "ran";
                })).isInstanceOf(LeaseLostException.class).hasMessageContaining("local validity (ttl 300ms)");
        assertThat(ran).isFalse();
    }

    @Test
    void theFirstRenewalIsDueFromTheRequestNotFromTheSlowGrant() throws Exception {
        scripted.acquireDelay = Duration.ofMillis(700);
        scripted.renewDelay = Duration.ofMillis(300);
        Duration ttl = Duration.ofMillis(1500);
        try (Lease lease = engine.acquire(spec("slow-grant-renewal").withTtl(ttl).withRenewEvery(Duration.ofMillis(600)))) {
            long until = System.nanoTime() + ttl.multipliedBy(2).toNanos();
            while (System.nanoTime() - until < 0) {
                assertThat(lease.isValid()).as("valid while renewals succeed").isTrue();
                Thread.sleep(50);
            }
        }
    }

    @Test
    void closingTheLeaseInsideItsOwnSectionIsReportedAsALoss() {
        assertThatThrownBy(() -> engine.execute(spec("closed-inside"), lease -> {
            lease.close();
            return "rest of the work ran without the lease";
        })).isInstanceOf(LeaseLostException.class).hasMessageContaining("released");
    }

    @Test
    void aHangingBackendCannotStarveAnotherBackendsRenewals() throws Exception {
        ScriptedBackend hanging = new ScriptedBackend("hanging");
        hanging.renewal.set(ScriptedBackend.Renewal.HANG);
        ScriptedBackend healthy = new ScriptedBackend("healthy");
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.EFFICIENCY, hanging);
        routes.put(LeaseKind.CORRECTNESS, healthy);
        Duration ttl = Duration.ofMillis(900);
        try (LeaseEngine two = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard())) {
            // More stuck renewals than any shared pool would have threads.
            for (int i = 0; i < 64; i++) {
                two.acquire(LeaseSpec.of("stuck-" + i, LeaseKind.EFFICIENCY).withTtl(Duration.ofMinutes(5))
                        .withRenewEvery(Duration.ofMillis(50)));
            }
            await().atMost(seconds(10)).until(() -> hanging.renewals.get() >= 4);
            try (Lease lease = two.acquire(spec("healthy").withTtl(ttl))) {
                long until = System.nanoTime() + ttl.multipliedBy(3).toNanos();
                while (System.nanoTime() - until < 0) {
                    assertThat(lease.isValid()).as("healthy lease kept while the other backend hangs").isTrue();
                    Thread.sleep(50);
                }
            }
        }
        finally {
            hanging.hang.countDown();
        }
    }

    @Test
    void validityCountsFromBeforeTheRequestWasSent() {
        scripted.acquireDelay = Duration.ofMillis(600);
        Duration ttl = Duration.ofSeconds(2);
        try (Lease lease = engine.acquire(spec("slow-grant").withTtl(ttl))) {
            // Counted from after the grant came back, 2 s would remain; from before the request, at most 1.4 s.
            assertThat(lease.remaining()).isLessThanOrEqualTo(ttl.minusMillis(600));
        }
    }

    @Test
    void validityFollowsTheMonotonicClockOnly() {
        AtomicLong monotonic = new AtomicLong(1_000);
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, scripted);
        try (LeaseEngine manual = LeaseEngine.builder(BackendRouter.of(routes)).clock(monotonic::get).build();
                Lease lease = manual.acquire(spec("manual").withTtl(Duration.ofMinutes(5)))) {
            assertThat(lease.isValid()).isTrue();
            monotonic.addAndGet(Duration.ofMinutes(5).toNanos());
            assertThat(lease.isValid()).as("valid after the monotonic clock passed the ttl").isFalse();
            assertThat(lease.remaining()).isZero();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class).hasMessageContaining("manual");
        }
    }

    /**
     * A backend whose store may end a grant before the ttl (Redlock: servers' clocks drift apart) says so with its
     * validity margin; the lease must turn invalid that much earlier, at grant and after every renewal.
     */
    @Test
    void aBackendsValidityMarginShortensTheLocalValidityAtGrantAndAfterRenewal() throws Exception {
        scripted.marginFraction = 0.1;
        AtomicLong monotonic = new AtomicLong(1_000);
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, scripted);
        Duration ttl = Duration.ofMinutes(5);
        try (LeaseEngine manual = LeaseEngine.builder(BackendRouter.of(routes)).clock(monotonic::get).build();
                Lease lease = manual.acquire(spec("margin").withTtl(ttl).withRenewEvery(Duration.ofMinutes(1)))) {
            assertThat(lease.remaining()).isEqualTo(Duration.ofSeconds(270));
            monotonic.addAndGet(Duration.ofSeconds(270).toNanos() - 1);
            assertThat(lease.isValid()).isTrue();
            monotonic.addAndGet(1);
            assertThat(lease.isValid()).as("valid past ttl - margin").isFalse();
        }
        try (Lease lease = engine.acquire(spec("margin-renewed").withTtl(Duration.ofSeconds(3)))) {
            int before = scripted.renewals.get();
            await().atMost(seconds(10)).until(() -> scripted.renewals.get() > before);
            assertThat(lease.remaining()).as("renewal extends to ttl - margin, never to the ttl")
                    .isLessThanOrEqualTo(Duration.ofMillis(2700));
        }
    }

    @Test
    void aMarginThatLeavesNoValidityIsAConfigurationError() {
        scripted.marginFraction = 0.7;
        assertThatThrownBy(() -> engine.acquire(spec("no-validity").withTtl(Duration.ofSeconds(3))))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("safety margin");
    }

    @Test
    void theCallerGetsLeaseLostExceptionWithTheWorksOwnExceptionAttached() {
        assertThatThrownBy(() -> engine.execute(spec("own-failure"), lease -> {
            scripted.lastListener.get().leaseLost("taken over");
            throw new IOException("disk full");
        })).isInstanceOf(LeaseLostException.class).hasMessageContaining("token").hasCauseInstanceOf(IOException.class);
    }

    @Test
    void theCallerGetsLeaseLostExceptionEvenWhenTheWorkFinishedNormally() {
        assertThatThrownBy(() -> engine.execute(spec("finished"), lease -> {
            scripted.lastListener.get().leaseLost("taken over");
            return "result produced without the lease";
        })).isInstanceOf(LeaseLostException.class);
        assertThat(Thread.currentThread().isInterrupted()).as("interrupt left behind").isFalse();
    }

    @Test
    void closingTheEngineInterruptsAndReleasesLeasesStillHeld() throws Exception {
        Future<String> call = blockingSection(spec("shutdown").withTtl(Duration.ofMinutes(10)));
        Lease programmatic = engine.acquire(spec("held-by-caller").withTtl(Duration.ofMinutes(10)));
        engine.close();
        assertLost(call, "lease engine was closed");
        assertThat(programmatic.isValid()).isFalse();
        assertThat(scripted.releases).hasValue(2);
    }

    /** A lost lease's release runs in the background; shutting the engine down must let it finish, not drop it. */
    @Test
    void closingTheEngineLetsAQueuedReleaseFinish() throws Exception {
        scripted.releaseBlocks = true;
        Future<String> call = blockingSection(spec("lost-before-shutdown").withTtl(Duration.ofMinutes(5)));
        scripted.lastListener.get().leaseLost("connection dropped");
        assertLost(call, "connection dropped");
        await().atMost(seconds(10)).until(() -> scripted.releases.get() == 1);
        Thread closing = new Thread(engine::close, "closing");
        closing.start();
        await().atMost(seconds(10)).until(() -> closing.getState() == Thread.State.TIMED_WAITING || !closing.isAlive());
        scripted.hang.countDown();
        closing.join(seconds(10).toMillis());
        assertThat(scripted.releasesDone).as("releases that completed").hasValue(1);
    }

    @Test
    void theLeaseIsReleasedWhenTheSectionEndsWhateverHappened() {
        engine.execute(spec("ok"), lease -> "fine");
        assertThatThrownBy(() -> engine.execute(spec("boom"), lease -> {
            throw new IllegalStateException("boom");
        })).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(scripted.releases).hasValue(2);
    }

    @Test
    void nestedSectionsExposeInnermostAndOuterLeases() {
        engine.execute(spec("outer"), outer -> engine.execute(spec("inner"), inner -> {
            assertThat(LeaseContext.current().name()).isEqualTo("inner");
            assertThat(LeaseContext.find("outer")).containsSame(outer);
            assertThat(LeaseContext.token()).isEqualTo(inner.token());
            return null;
        }));
        assertThatThrownBy(LeaseContext::current).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@Leased");
    }

    @Test
    void theTokenToSendIsThatOfTheInnermostLeaseWithOne() {
        ScriptedBackend plain = new ScriptedBackend("plain");
        plain.fenced = false;
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, scripted);
        routes.put(LeaseKind.EFFICIENCY, plain);
        try (LeaseEngine two = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard())) {
            assertThat(LeaseContext.findToken()).isEmpty();
            two.execute(spec("outer"), outer -> two.execute(LeaseSpec.of("inner", LeaseKind.EFFICIENCY), inner -> {
                assertThat(LeaseContext.current().hasToken()).isFalse();
                assertThat(LeaseContext.findToken()).contains(outer.token());
                return two.execute(spec("innermost"), innermost -> {
                    assertThat(LeaseContext.findToken()).contains(innermost.token());
                    return null;
                });
            }));
            assertThat(LeaseContext.findToken()).isEmpty();
        }
    }

    @Test
    void reenteringTheSameNameReusesTheHeldLeaseInsteadOfDeadlocking() {
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        engine.close();
        engine = engineOver(memory);
        FencingToken outerToken = engine.execute(spec("again"), outer -> engine.execute(spec("again"), inner -> {
            assertThat(inner).isSameAs(outer);
            assertThat(LeaseContext.current()).isSameAs(outer);
            assertThat(inner.token()).isEqualTo(outer.token());
            return outer.token();
        }));
        assertThat(memory.lastToken("again")).as("the last grant is the outer one").hasValue(outerToken.value());
        assertThatThrownBy(() -> engine.execute(spec("again"),
                outer -> engine.execute(LeaseSpec.of("again", LeaseKind.EFFICIENCY), inner -> null)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already held by this thread");
    }

    @Test
    void aLostOuterLeaseKeepsTheThreadInterruptedThroughTheInnerSection() throws Exception {
        AtomicBoolean stillInterruptedAfterInner = new AtomicBoolean();
        Future<Object> call = pool.submit(() -> engine.execute(spec("outer-lost").withTtl(Duration.ofMinutes(5)), outer -> {
            try {
                engine.execute(spec("inner-fine").withTtl(Duration.ofMinutes(5)), inner -> {
                    ((HeldLease) outer).markLost(LossCause.BACKEND_REPORTED, "outer taken over");
                    return null;
                });
            }
            finally {
                stillInterruptedAfterInner.set(Thread.currentThread().isInterrupted());
            }
            return null;
        }));
        assertThatThrownBy(() -> call.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).cause()
                .isInstanceOf(LeaseLostException.class).hasMessageContaining("outer-lost");
        assertThat(stillInterruptedAfterInner).as("outer work still told to stop").isTrue();
    }

    /**
     * A ZooKeeper SUSPENDED loses every lease of a thread at once. The inner section's caller skips the item; the
     * outer body must still be interrupted, whichever of the two losses was declared first.
     */
    @Test
    void losingNestedLeasesTogetherInterruptsEverySectionStillRunning() throws Exception {
        for (boolean innerFirst : new boolean[] {true, false}) {
            CountDownLatch inInner = new CountDownLatch(1);
            AtomicReference<HeldLease> outerLease = new AtomicReference<>();
            AtomicReference<HeldLease> innerLease = new AtomicReference<>();
            AtomicBoolean outerInterrupted = new AtomicBoolean();
            Future<Object> call = pool.submit(() -> engine.execute(spec("batch").withTtl(Duration.ofMinutes(5)), outer -> {
                outerLease.set((HeldLease) outer);
                try {
                    engine.execute(spec("item-1").withTtl(Duration.ofMinutes(5)), inner -> {
                        innerLease.set((HeldLease) inner);
                        inInner.countDown();
                        Thread.sleep(seconds(30).toMillis());
                        return null;
                    });
                }
                catch (RuntimeException skipThisItem) {
                    // the usual "skip this item and go on" of a batch (lost, or interrupted just before its loss)
                }
                try {
                    Thread.sleep(seconds(30).toMillis());
                }
                catch (InterruptedException ex) {
                    outerInterrupted.set(true);
                    throw ex;
                }
                return null;
            }));
            assertThat(inInner.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            HeldLease first = innerFirst ? innerLease.get() : outerLease.get();
            HeldLease second = innerFirst ? outerLease.get() : innerLease.get();
            first.markLost(LossCause.BACKEND_REPORTED, "session suspended");
            second.markLost(LossCause.BACKEND_REPORTED, "session suspended");
            assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).cause()
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining("batch");
            assertThat(outerInterrupted).as("outer body interrupted (inner lost first: %s)", innerFirst).isTrue();
        }
    }

    /** An interrupt that someone else sent before the loss is still there after the lost section. */
    @Test
    void anInterruptThatWasNotOursSurvivesTheLostSection() {
        assertThatThrownBy(() -> engine.execute(spec("foreign"), lease -> {
            Thread.currentThread().interrupt();
            ((HeldLease) lease).markLost(LossCause.BACKEND_REPORTED, "taken over");
            return null;
        })).isInstanceOf(LeaseLostException.class);
        assertThat(Thread.interrupted()).as("the caller's own interrupt is kept").isTrue();
    }

    @Test
    void anAcquireAfterCloseIsRefusedWithoutAskingTheStore() {
        engine.close();
        assertThatThrownBy(() -> engine.execute(spec("late"), lease -> "ran"))
                .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining("late")
                .hasMessageContaining("shutting down");
        assertThat(scripted.acquires).as("grant requests sent after close").hasValue(0);
    }

    /** A grant that comes back after closing started must not escape: it is released and the caller refused. */
    @Test
    void aGrantRacingWithCloseIsReleasedAndRefused() throws Exception {
        CountDownLatch requestSent = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        scripted.duringAcquire = () -> {
            requestSent.countDown();
            try {
                closed.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        };
        AtomicBoolean ran = new AtomicBoolean();
        Future<Object> call = pool.submit(() -> engine.execute(spec("racing").withTtl(Duration.ofMinutes(5)), lease -> {
            ran.set(true);
            return null;
        }));
        assertThat(requestSent.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        engine.close();
        closed.countDown();
        assertThatThrownBy(() -> call.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).cause()
                .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining("shutting down");
        assertThat(ran).as("work ran on a grant taken while shutting down").isFalse();
        assertThat(scripted.releases).as("the raced grant was released").hasValue(1);
    }

    @Test
    void aWaiterRetriesBackendErrorsWhileItMayStillWait() {
        scripted.acquireFailures.set(3);
        String result = engine.execute(spec("flaky").withWaitFor(seconds(20)), lease -> "ran");
        assertThat(result).isEqualTo("ran");
        assertThat(scripted.acquires).as("grant requests").hasValue(4);
    }

    @Test
    void aWaiterThatRunsOutOfTimeReportsTheLastBackendError() {
        scripted.acquireFailures.set(Integer.MAX_VALUE);
        assertThatThrownBy(() -> engine.execute(spec("down").withWaitFor(Duration.ofMillis(300)), lease -> "ran"))
                .isInstanceOf(LeaseUnavailableException.class)
                .cause().hasMessageContaining("grant request " + scripted.acquires.get());
        assertThat(scripted.acquires).as("retried while waiting").hasValueGreaterThan(1);
    }

    @Test
    void aBusyLeaseSaysHowLongTheCallerWaitedInTheFormItWasWritten() {
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        try (LeaseEngine holder = engineOver(memory); LeaseEngine waiter = engineOver(memory);
                Lease held = holder.acquire(spec("busy-report"))) {
            assertThat(held.isValid()).isTrue();
            assertThatThrownBy(() -> waiter.acquire(spec("busy-report").withWaitFor(Duration.ofMillis(1500))))
                    .isInstanceOf(LeaseUnavailableException.class).hasMessageContaining("waited 1500ms");
        }
    }

    @Test
    void withoutWaitingABackendErrorFailsAtOnce() {
        scripted.acquireFailures.set(1);
        assertThatThrownBy(() -> engine.execute(spec("no-wait"), lease -> "ran"))
                .isInstanceOf(LeaseUnavailableException.class).hasRootCauseMessage("store unreachable (grant request 1)");
        assertThat(scripted.acquires).hasValue(1);
    }

    /** A renewal sent before the deadline and answered after it must not make the lease valid again. */
    @Test
    void validityNeverComesBack() throws Exception {
        AtomicLong monotonic = new AtomicLong();
        Duration ttl = Duration.ofMinutes(5);
        // The grant takes two minutes of the manual clock, so the first renewal is due at once and starts at minute 2;
        // answered late, at minute 5 and a second, it would extend the lease to minute 7.
        scripted.duringAcquire = () -> monotonic.addAndGet(Duration.ofMinutes(2).toNanos());
        scripted.renewal.set(ScriptedBackend.Renewal.HANG);
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, scripted);
        try (LeaseEngine manual = LeaseEngine.builder(BackendRouter.of(routes)).clock(monotonic::get).build();
                Lease lease = manual.acquire(spec("monotone").withTtl(ttl).withRenewEvery(Duration.ofSeconds(90)))) {
            await().atMost(seconds(10)).until(() -> scripted.renewals.get() == 1);
            monotonic.addAndGet(Duration.ofMinutes(3).plusSeconds(1).toNanos());
            assertThat(lease.isValid()).as("valid past the deadline").isFalse();
            scripted.hang.countDown();
            await().atMost(seconds(10)).until(() -> ((HeldLease) lease).isMarkedLost());
            assertThat(lease.isValid()).as("valid again after a late renewal").isFalse();
            assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("local validity");
        }
    }

    /**
     * Losses fired at random moments around the end of a section: a loss inside must interrupt and surface as
     * LeaseLostException; a loss after the thread left must not touch the thread; no interrupt survives the
     * section either way.
     */
    @Test
    void interruptsNeverLeakOutOfASectionUnderLoad() throws Exception {
        int rounds = 1500;
        int lostInside = 0;
        int keptToTheEnd = 0;
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < rounds; i++) {
            CountDownLatch entered = new CountDownLatch(1);
            long work = 100_000;
            long delay = random.nextInt(250_000);
            Future<?> racer = pool.submit(() -> {
                entered.await();
                spin(delay);
                scripted.lastListener.get().leaseLost("lost in round");
                return null;
            });
            try {
                engine.execute(spec("race"), lease -> {
                    entered.countDown();
                    spin(work);
                    return null;
                });
                keptToTheEnd++;
            }
            catch (LeaseLostException ex) {
                lostInside++;
            }
            racer.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(Thread.currentThread().isInterrupted()).as("interrupt left after round %d", i).isFalse();
        }
        assertThat(lostInside).as("rounds where the loss hit inside the section").isPositive();
        assertThat(keptToTheEnd).as("rounds where the loss came after the section").isPositive();
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }
}
