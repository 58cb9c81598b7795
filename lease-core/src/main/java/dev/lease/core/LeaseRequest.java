package dev.lease.core;

import java.time.Duration;

import dev.lease.LeaseKind;
import dev.lease.LeaseUnavailableException;
import dev.lease.spi.LeaseBackend;

/**
 * One call for a lease, resolved ({@link LeaseRequests#resolve}): its name checked, the backend that serves its kind,
 * its timing. Each grant request of the call ({@link dev.lease.spi.GrantRequest}) is made from it.
 *
 * @param fence the resource to fence at grant, or null
 * @param holdAtLeast how long after its grant the lease is kept at least, even when closed sooner; zero for none
 */
record LeaseRequest(String name, LeaseKind kind, LeaseBackend<?> backend, Timing timing, Duration waitFor,
        String fence, String nameTemplate, Duration holdAtLeast) {

    LeaseDescription description() {
        return new LeaseDescription(name, nameTemplate, kind, backend.id());
    }

    LeaseUnavailableException unavailable(Exception cause) {
        return new LeaseUnavailableException(name, waitFor, backend.id(), cause);
    }

    LeaseUnavailableException shuttingDown() {
        return new LeaseUnavailableException(name, backend.id(),
                "the application is shutting down (the lease engine is closed), so no new lease is granted");
    }
}
