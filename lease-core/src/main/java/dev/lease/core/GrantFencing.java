package dev.lease.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.spi.GrantFence;

/**
 * Fence at grant, for the engine: the resource a grant names is advanced in a transaction of its own, bounded by the
 * lease's validity; a section that re-enters the lease never fences that resource again (its thread may be inside
 * the transaction that wrote it, whose lock a second advance would wait for), and another resource it names goes
 * through {@link GrantFence#advanceOnReentry}. A fence that refuses or fails costs the lease.
 */
final class GrantFencing {

    private final GrantFence fence;
    /** The resource each live lease's grant fenced; a lease leaves when it is closed. */
    private final Map<HeldLease, String> fencedAtGrant = new ConcurrentHashMap<>();

    /** @param fence the fence to advance, or null when the application has none */
    GrantFencing(GrantFence fence) {
        this.fence = fence;
    }

    /** Checks that fence at grant can work for a lease of this kind. */
    void check(String culprit, LeaseKind kind) {
        if (kind != LeaseKind.CORRECTNESS) {
            throw new LeaseConfigurationException(culprit + ": fence at grant needs a fencing token, but the lease is "
                    + kind + ".", "remove fence, or make the lease CORRECTNESS if a duplicate would corrupt data.");
        }
        if (fence == null) {
            throw new LeaseConfigurationException(culprit + ": fence at grant needs a fence to advance, and there is "
                    + "no JdbcFence bean (or there are several and none is @Primary).", "give the application a "
                    + "single DataSource (a JdbcFence bean is then created), declare a JdbcFence bean (mark one "
                    + "@Primary if there are several), or remove fence.");
        }
    }

    /**
     * Advances the fence to the new lease's token before any work runs.
     *
     * @throws LeaseLostException when the fence refused or failed; the lease is then marked lost
     */
    void atGrant(HeldLease lease, String resource) {
        try {
            fence.advanceAtGrant(resource, lease.token(), lease.remaining());
        }
        catch (RuntimeException ex) {
            throw lost(lease, resource, ex);
        }
        fencedAtGrant.put(lease, resource);
    }

    /**
     * A re-entered section names {@code resource}: nothing to do when the grant fenced it, else the fence joins the
     * thread's transaction on its store if there is one.
     *
     * @throws LeaseLostException when the fence refused or failed; the lease is then marked lost
     */
    void onReentry(HeldLease lease, String resource) {
        if (resource.equals(fencedAtGrant.get(lease))) {
            return;
        }
        try {
            fence.advanceOnReentry(resource, lease.token(), lease.remaining());
        }
        catch (RuntimeException ex) {
            throw lost(lease, resource, ex);
        }
    }

    /** The lease was closed: nothing of it is kept. */
    void forget(HeldLease lease) {
        fencedAtGrant.remove(lease);
    }

    private static LeaseLostException lost(HeldLease lease, String resource, RuntimeException ex) {
        lease.markLost(LossCause.FENCE_REFUSED, "the fence of resource '" + resource + "' could not be advanced to "
                + "its token at grant, so the lease cannot be relied on: " + ex.getMessage());
        return lease.lostException(ex);
    }
}
