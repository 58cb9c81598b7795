package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * {@link LeaseSpec#withHoldAtLeast}: a section that ends sooner leaves its lease held (renewed, listed, busy for this
 * instance and another) until the hold has passed since the grant, and no longer; closing the engine releases it at
 * once; a loss just ends it. Two engines over one in-memory store play two application instances.
 */
class HoldAtLeastTest {

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final Counting<?> first = new Counting<>(store);
    private final LeaseEngine one = LeaseEngineTest.engineOver(first);
    private final LeaseEngine other = LeaseEngineTest.engineOver(new Counting<>(store));

    @AfterEach
    void stop() {
        one.close();
        other.close();
    }

    /**
     * Held past the end of its section and past its ttl (renewals go on), busy for both instances meanwhile, released
     * no sooner than the hold after the grant; the whole time costs no store request but the renewals.
     */
    @Test
    void aShortSectionKeepsItsLeaseUntilTheHoldHasPassedSinceItsGrantAndNoLonger() {
        Duration ttl = millis(600);
        Duration hold = seconds(2);
        LeaseSpec spec = LeaseSpec.of("nightly", LeaseKind.EFFICIENCY).withTtl(ttl).withHoldAtLeast(hold);
        long before = System.nanoTime();

        String outcome = one.execute(spec, lease -> "done");
        assertThat(outcome).isEqualTo("done");

        assertThat(one.held()).as("held over after the section ended").extracting(HeldLeaseSnapshot::name)
                .containsExactly("nightly");
        assertThat(one.tryAcquire(spec)).as("this instance's next tick").isEmpty();
        assertThat(other.tryAcquire(spec)).as("another instance's tick").isEmpty();
        assertThat(System.nanoTime() - before).as("the probes ran within the hold, so they had to find it busy")
                .isLessThan(hold.toNanos());

        Lease next = await().atMost(hold.plus(seconds(10))).pollInterval(Duration.ofMillis(50))
                .until(() -> other.tryAcquire(spec.withHoldAtLeast(Duration.ZERO)).orElse(null), l -> l != null);
        long grantedAgainAfter = System.nanoTime() - before;
        next.close();
        assertThat(grantedAgainAfter).as("granted again no sooner than the hold after the first grant (%s > ttl %s)",
                hold, ttl).isGreaterThanOrEqualTo(hold.toNanos());
        assertThat(one.held()).isEmpty();
        assertThat(first.calls).as("store requests of the holding instance: its grant, its probe, renewals only, "
                + "and one release").containsOnlyKeys("tryAcquire", "renew", "release")
                .containsEntry("tryAcquire", 2).containsEntry("release", 1);
        assertThat(first.calls.get("renew")).as("renewals kept it past its ttl").isPositive();
    }

    @Test
    void aLeaseHeldLongerThanItsHoldIsReleasedWhenItsSectionEnds() {
        LeaseSpec spec = LeaseSpec.of("long-work", LeaseKind.EFFICIENCY).withHoldAtLeast(millis(100));
        one.execute(spec, lease -> {
            long started = System.nanoTime();
            await().atMost(seconds(10)).until(() -> System.nanoTime() - started > millis(150).toNanos());
            return null;
        });
        assertThat(one.held()).isEmpty();
        assertThat(other.tryAcquire(spec)).as("released as the section ended").isPresent();
    }

    @Test
    void closingTheEngineReleasesAHeldOverLeaseAtOnce() {
        LeaseSpec spec = LeaseSpec.of("report", LeaseKind.EFFICIENCY).withHoldAtLeast(Duration.ofMinutes(10));
        one.execute(spec, lease -> null);
        assertThat(other.tryAcquire(spec)).isEmpty();

        one.close();

        assertThat(first.calls).containsEntry("release", 1);
        assertThat(other.tryAcquire(spec)).as("free once the instance shut down gracefully").isPresent();
    }

    /** What a context's lifecycle does as it stops, while the store's client still runs, and as it starts again. */
    @Test
    void whileTheEngineStopsHoldingOverItReleasesWhatItHeldOverAndHoldsNothingNew() {
        LeaseSpec spec = LeaseSpec.of("stopping", LeaseKind.EFFICIENCY).withHoldAtLeast(Duration.ofMinutes(10));
        one.execute(spec, lease -> null);

        one.stopHoldingOver();

        assertThat(one.held()).isEmpty();
        assertThat(first.calls).containsEntry("release", 1);
        one.execute(spec, lease -> null);
        assertThat(one.held()).as("a section that ends while stopping").isEmpty();
        one.resumeHoldingOver();
        one.execute(spec, lease -> null);
        assertThat(one.held()).as("held over again once started again").hasSize(1);
    }

    @Test
    void aLossDuringTheHoldOverEndsItWithoutInterruptingTheThreadThatRanTheSection() {
        LeaseSpec spec = LeaseSpec.of("lost-later", LeaseKind.EFFICIENCY).withTtl(millis(900))
                .withHoldAtLeast(Duration.ofMinutes(10));
        one.execute(spec, lease -> null);
        assertThat(one.held()).hasSize(1);

        first.refuseRenewals = true;

        await().atMost(seconds(10)).until(() -> one.held().isEmpty());
        await().atMost(seconds(10)).until(() -> first.calls.getOrDefault("release", 0) == 1);
        assertThat(Thread.interrupted()).as("the thread that ran the section was interrupted").isFalse();
        assertThat(other.tryAcquire(spec)).as("released after the loss").isPresent();
    }

    @Test
    void aNegativeHoldOrAHoldOnAnElectionIsRefused() {
        LeaseSpec spec = LeaseSpec.of("x", LeaseKind.EFFICIENCY);
        assertThatThrownBy(() -> spec.withHoldAtLeast(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdAtLeast must not be negative")
                .hasMessageContaining("'x'");
        assertThatThrownBy(() -> one.election(spec.withHoldAtLeast(Duration.ofSeconds(1)), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdAtLeast")
                .hasMessageContaining("Election 'x'");
        assertThat(spec.withHoldAtLeast(Duration.ofSeconds(4))).isEqualTo(spec.withHoldAtLeast(Duration.ofSeconds(4)))
                .isNotEqualTo(spec).hasToString(spec.toString().replace("]", ", holdAtLeast=PT4S]"));
    }

    /** The in-memory store, counting the requests an engine sends it by kind; refusing renewals when told. */
    private static final class Counting<G extends Grant> extends ForwardingLeaseBackend<G> {

        final Map<String, Integer> calls = new ConcurrentHashMap<>();
        volatile boolean refuseRenewals;

        Counting(LeaseBackend<G> store) {
            super(store);
        }

        private void count(String request) {
            calls.merge(request, 1, Integer::sum);
        }

        @Override
        public Optional<G> tryAcquire(GrantRequest request) throws Exception {
            count("tryAcquire");
            return super.tryAcquire(request);
        }

        @Override
        public boolean renew(G grant) throws Exception {
            count("renew");
            return !refuseRenewals && super.renew(grant);
        }

        @Override
        public Set<G> renewAll(Collection<G> grants)
                throws Exception {
            calls.merge("renew", grants.size(), Integer::sum);
            return refuseRenewals ? Set.copyOf(grants) : super.renewAll(grants);
        }

        @Override
        public void release(G grant) throws Exception {
            count("release");
            super.release(grant);
        }

        @Override
        public void abandon(GrantRequest request) throws Exception {
            count("abandon");
            super.abandon(request);
        }

        @Override
        public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
            count("awaitRelease");
            super.awaitRelease(name, maxWait);
        }

        @Override
        public Map<String, Object> checkHealth(Duration timeout) throws Exception {
            count("checkHealth");
            return super.checkHealth(timeout);
        }
    }
}
