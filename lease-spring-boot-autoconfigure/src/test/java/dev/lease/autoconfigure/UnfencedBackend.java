package dev.lease.autoconfigure;

import java.util.Optional;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A backend that issues no fencing tokens, for the tests of how backends are chosen and refused for
 * {@code CORRECTNESS} leases ({@code InMemoryLeaseBackend}, the only backend at hand, is fenced). It is never asked
 * for a lease: a call means the refusal under test let something through. Public because the tests that need it are
 * in two packages.
 */
public final class UnfencedBackend implements LeaseBackend<Grant> {

    @Override
    public String id() {
        return "unfenced";
    }

    @Override
    public BackendTraits traits() {
        return BackendTraits.unfenced("the unfenced backend issues no fencing tokens");
    }

    @Override
    public Optional<Grant> tryAcquire(GrantRequest request) {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean renew(Grant grant) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void release(Grant grant) {
        throw new UnsupportedOperationException();
    }
}
