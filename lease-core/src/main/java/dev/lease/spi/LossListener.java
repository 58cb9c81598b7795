package dev.lease.spi;

/**
 * How a backend reports, at once, that a grant is no longer safe to rely on (a ZooKeeper session suspended or
 * lost, a connection dropped), without waiting for the next renewal. Calling it more than once is harmless.
 */
@FunctionalInterface
public interface LossListener {

    /**
     * The grant is lost.
     *
     * @param reason why, in a few words; it ends up in {@link dev.lease.LeaseLostException}'s message
     */
    void leaseLost(String reason);
}
