package dev.lease.core;

import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

/** A grant and the backend that made it, so that the grant goes back to that backend with its own type. */
record BackendGrant<G extends Grant>(LeaseBackend<G> backend, G grant) {

    boolean renew() throws Exception {
        return backend.renew(grant);
    }

    void release() throws Exception {
        backend.release(grant);
    }
}
