package dev.lease.core;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import dev.lease.LeaseLostException;
import dev.lease.spi.LeaseBackend;

/**
 * The leases one engine holds. A grant becomes a {@link HeldLease} here, renewed on its backend's schedule
 * ({@link RenewalBatcher}), fenced at grant when its call names a resource, and registered until it is closed, so that
 * closing the engine finds every one. Once closing has begun nothing is registered any more: a grant that races with it
 * is released at once and refused, so no grant ever escapes the renewal, deadline and loss handling of a running engine.
 */
final class HeldLeases {

    private final RenewalExecutors executors;
    /** What a held lease's validity (its local deadline) is measured on. */
    private final LongSupplier validityClock;
    private final LeaseEngineListener listeners;
    private final GrantFencing fencing;
    private final Set<HeldLease> live = ConcurrentHashMap.newKeySet();
    /** One per backend, so that the renewals due on a backend go to it together. */
    private final Map<LeaseBackend<?>, RenewalBatcher> renewals = new ConcurrentHashMap<>();
    /** Set once, under the lock of {@link #live}, when closing starts. */
    private volatile boolean closing;
    /** Whether a lease closed before its holdAtLeast passed is kept (false while the application stops). */
    private volatile boolean holdingOver = true;

    HeldLeases(RenewalExecutors executors, LongSupplier validityClock, LeaseEngineListener listeners,
            GrantFencing fencing) {
        this.executors = executors;
        this.validityClock = validityClock;
        this.listeners = listeners;
        this.fencing = fencing;
    }

    boolean isClosing() {
        return closing;
    }

    /**
     * The lease of a grant, not yet held: until {@link #admit} nothing renews it, and nothing but its own
     * {@link HeldLease#close(boolean)} frees it.
     *
     * @param requestedAt when the grant request was sent, on the validity clock: validity counts from there
     */
    HeldLease lease(LeaseRequest request, BackendGrant<?> grant, long requestedAt) {
        LeaseBackend<?> backend = request.backend();
        RenewalBatcher batcher = renewals.computeIfAbsent(backend,
                b -> new RenewalBatcher(b, executors, validityClock));
        return new HeldLease(request.description(), grant, request.timing(), requestedAt, executors, batcher,
                validityClock, this::closed, listeners, request.holdAtLeast(), () -> holdingOver && !closing);
    }

    /**
     * Holds the lease: registers it, lets its backend's loss reports reach it, starts renewing it, and fences the
     * request's resource at grant.
     *
     * @param relay the loss listener its grant request carried
     * @throws dev.lease.LeaseUnavailableException when the engine is closing; the grant was released
     * @throws LeaseLostException when the fence refused the new token; the grant was released
     */
    void admit(HeldLease lease, LossRelay relay, LeaseRequest request) {
        boolean registered;
        synchronized (live) {
            registered = !closing && live.add(lease);
        }
        if (!registered) {
            lease.close(false);
            throw request.shuttingDown();
        }
        relay.attach(lease);
        lease.start();
        if (request.fence() != null) {
            try {
                fencing.atGrant(lease, request.fence());
            }
            catch (LeaseLostException refusedByTheFence) {
                // The store just granted it and still holds it: release now, not in the background as after a loss
                // at the store, so that a retry finds the name free at once.
                lease.close(false);
                throw refusedByTheFence;
            }
        }
    }

    /** As {@link LeaseEngine#held()}. */
    List<HeldLeaseSnapshot> snapshots() {
        return live.stream().map(HeldLease::snapshot).filter(Objects::nonNull)
                .sorted(Comparator.comparing(HeldLeaseSnapshot::name).thenComparing(HeldLeaseSnapshot::kind))
                .toList();
    }

    /**
     * Registers no lease from now on.
     *
     * @return the leases held now, all that will ever need shutting down; null when closing had begun already
     */
    List<HeldLease> stopAdmitting() {
        synchronized (live) {
            if (closing) {
                return null;
            }
            closing = true;
            return List.copyOf(live);
        }
    }

    /** As {@link LeaseEngine#stopHoldingOver()} and {@link LeaseEngine#resumeHoldingOver()}. */
    void holdOver(boolean keep) {
        holdingOver = keep;
        if (!keep) {
            List.copyOf(live).forEach(HeldLease::endHoldOver);
        }
    }

    /** How many renewals wait on the schedules of all backends; for tests. */
    int renewalsScheduled() {
        return renewals.values().stream().mapToInt(RenewalBatcher::scheduledCount).sum();
    }

    /** A lease was closed: it is no longer held. */
    private void closed(HeldLease lease) {
        live.remove(lease);
        fencing.forget(lease);
    }
}
