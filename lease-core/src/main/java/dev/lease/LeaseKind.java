package dev.lease;

/**
 * What a lease is protecting, decided per lease by the user because the two need different guarantees.
 *
 * <p>The distinction comes from Martin Kleppmann's analysis of distributed locks: most teams deploy an
 * efficiency lock and then rely on it as if it were a correctness lock.
 */
public enum LeaseKind {

    /**
     * The lease protects data: two holders at once would corrupt it or bill twice. A lock service alone cannot
     * promise that, because a holder can pause (GC, page faults, a slow network) past its lease and wake up
     * still believing it holds it. A {@code CORRECTNESS} lease therefore always carries a {@link FencingToken},
     * and is only safe if the protected resource rejects writes that carry a token lower than one it has
     * already accepted (see {@code dev.lease.fence.JdbcFence}). Only backends that issue fencing tokens may
     * serve this kind; routing it elsewhere fails the application at startup.
     */
    CORRECTNESS,

    /**
     * The lease only avoids doing the same expensive work twice; an occasional duplicate is harmless (the work
     * is idempotent, or a duplicate costs only time). Any backend will do, Redis being the natural one.
     */
    EFFICIENCY
}
