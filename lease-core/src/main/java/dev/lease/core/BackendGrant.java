package dev.lease.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

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

    /**
     * Renews grants that {@code backend} made, in one {@link LeaseBackend#renewAll} call.
     *
     * @return those no longer held
     */
    @SuppressWarnings("unchecked")
    static <G extends Grant> Set<G> renewAll(LeaseBackend<G> backend, Collection<? extends Grant> grants)
            throws Exception {
        // Each grant came from this very backend's tryAcquire (the batcher serves one backend), so it is a G.
        List<G> typed = new ArrayList<>(grants.size());
        for (Grant grant : grants) {
            typed.add((G) grant);
        }
        return backend.renewAll(typed);
    }
}
