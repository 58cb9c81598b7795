package dev.lease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

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

    /** The store as a paused holder sees it (never told of a loss), counting the renewals it is asked for. */
    private static final class Asked<G extends Grant> extends ForwardingLeaseBackend<G> {

        final AtomicInteger renewals = new AtomicInteger();

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
            return super.renew(grant);
        }

        @Override
        public Set<G> renewAll(Collection<G> grants) throws Exception {
            renewals.addAndGet(grants.size());
            return super.renewAll(grants);
        }
    }
}
