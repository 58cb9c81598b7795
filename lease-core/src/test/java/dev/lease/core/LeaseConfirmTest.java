package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * {@link Lease#confirm()}: the store's word, asked now, that it still holds the grant. Leases here are long, so no
 * scheduled renewal runs during a test: what the store is asked, confirm asked.
 */
class LeaseConfirmTest {

    private static final LeaseSpec RELAY = LeaseSpec.of("relay", LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(60));

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final Asked<?> asked = new Asked<>(store);
    private final LeaseEngine engine = LeaseEngineTest.engineOver(asked);

    @AfterEach
    void close() {
        engine.close();
    }

    @Test
    void aGrantTheStoreStillHoldsIsConfirmedByARenewalSentForIt() {
        try (Lease lease = engine.acquire(RELAY)) {
            int before = asked.renewals.get();
            lease.confirm();
            assertThat(asked.renewals.get()).isGreaterThan(before);
            lease.confirm();
            assertThat(asked.renewals.get()).isGreaterThan(before + 1);
            assertThat(lease.isValid()).isTrue();
        }
    }

    /** A paused holder is told nothing: its lease looks valid until it asks the store. */
    @Test
    void aGrantTheStoreNoLongerHoldsIsLostWhenConfirmed() {
        try (Lease lease = engine.acquire(RELAY)) {
            store.revoke("relay");
            assertThat(lease.isValid()).isTrue();
            assertThatThrownBy(lease::confirm).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("no longer holds this grant");
            assertThat(lease.isValid()).isFalse();
        }
    }

    /**
     * A confirmation asked while a scheduled renewal is out waits for that answer, then sends the next: never two
     * renewals of one lease side by side, which a store of conditional writes (a Kubernetes Lease) answers by refusing
     * one of them, so that the holder would lose its own lease by asking whether it holds it.
     */
    @Test
    void aConfirmationAskedDuringARenewalInFlightSendsItsOwnAfterThatAnswer() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        asked.hold = release;
        ExecutorService confirmer = Executors.newSingleThreadExecutor();
        try (Lease lease = engine.acquire(RELAY.withRenewEvery(Duration.ofMillis(50)))) {
            await().atMost(seconds(10)).until(() -> asked.inFlight.get() == 1);
            int sent = asked.renewals.get();
            AtomicReference<Thread> thread = new AtomicReference<>();
            Future<?> confirmed = confirmer.submit(() -> {
                thread.set(Thread.currentThread());
                lease.confirm();
                return null;
            });
            await().atMost(seconds(10)).until(() -> thread.get() != null
                    && thread.get().getState() == Thread.State.TIMED_WAITING);
            // Unfixed, the confirmation's renewal went out at once beside the held one.
            await().during(millis(300)).atMost(seconds(10)).until(() -> asked.renewals.get() == sent);
            asked.hold = null;
            release.countDown();
            confirmed.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(asked.renewals.get()).as("the confirmation's own renewal, after the held one").isGreaterThan(sent);
            assertThat(asked.mostInFlight.get()).as("renewals of the lease side by side").isEqualTo(1);
            assertThat(lease.isValid()).isTrue();
        }
        finally {
            release.countDown();
            confirmer.shutdownNow();
        }
    }

    /** The store as a paused holder sees it (never told of a loss), counting the renewals it is asked for. */
    private static final class Asked<G extends Grant> extends ForwardingLeaseBackend<G> {

        final AtomicInteger renewals = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger mostInFlight = new AtomicInteger();
        /** While set, renewals wait for it before they reach the store. */
        volatile CountDownLatch hold;

        Asked(LeaseBackend<G> store) {
            super(store);
        }

        @Override
        public Optional<G> tryAcquire(GrantRequest request) throws Exception {
            return super.tryAcquire(new GrantRequest(request.name(), request.ttl(), reason -> {
            }, request.attempt(), request.deadline()));
        }

        @Override
        public boolean renew(G grant) throws Exception {
            renewals.incrementAndGet();
            enter();
            try {
                return super.renew(grant);
            }
            finally {
                inFlight.decrementAndGet();
            }
        }

        @Override
        public Set<G> renewAll(Collection<G> grants) throws Exception {
            renewals.addAndGet(grants.size());
            enter();
            try {
                return super.renewAll(grants);
            }
            finally {
                inFlight.decrementAndGet();
            }
        }

        private void enter() throws InterruptedException {
            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CountDownLatch held = hold;
            if (held != null) {
                held.await();
            }
        }
    }
}
