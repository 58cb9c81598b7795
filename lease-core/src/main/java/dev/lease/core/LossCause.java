package dev.lease.core;

/** Why a held lease was lost, as metrics tag it ({@link #tag()}). */
public enum LossCause {

    /** A renewal failed: the store did not answer, or answered with an error. */
    RENEWAL_FAILED("renewal-failed"),

    /**
     * The store says the grant is gone: a renewal was refused (the grant expired, was taken over or deleted), or the
     * backend reported it (a ZooKeeper session suspended, a holder node deleted).
     */
    BACKEND_REPORTED("backend-reported"),

    /** The lease's local validity ran out before a renewal succeeded. */
    DEADLINE("deadline"),

    /** The lease engine was closed while the lease was held: the application is shutting down. */
    SHUTDOWN("shutdown"),

    /** The leader gave up its term ({@code Leadership.yieldLeadership()}): deliberate, logged at INFO, not WARN. */
    YIELDED("yielded"),

    /**
     * The fence could not be advanced at grant: it refused the new token (a later holder had already written under a
     * newer one), failed, or waited past the lease's validity for a lock another transaction holds.
     */
    FENCE_REFUSED("fence-refused");

    private final String tag;

    LossCause(String tag) {
        this.tag = tag;
    }

    /**
     * The value of the {@code cause} tag of the {@code lease.lost} counter.
     *
     * @return the tag value, such as {@code renewal-failed}
     */
    public String tag() {
        return tag;
    }
}
