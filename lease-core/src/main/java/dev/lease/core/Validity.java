package dev.lease.core;

import java.util.function.LongSupplier;

import dev.lease.Durations;
import dev.lease.spi.BackendTraits;

/**
 * How long this process may believe in one grant: a deadline on the monotonic clock, set to (time before the request
 * was sent) + ttl, less the backend's {@link BackendTraits#validityMargin margin}, and moved only by a renewal answered
 * in time, the same way. The store's clock decides when the grant expires on the server; the deadline only makes sure
 * this process stops believing in the lease no later than the store could.
 */
final class Validity {

    private final LongSupplier clock;
    private final Timing timing;
    private final long requestedAt;
    private long deadline;

    /** @param requestedAt when the grant request was sent, on {@code clock} */
    Validity(LongSupplier clock, Timing timing, long requestedAt) {
        this.clock = clock;
        this.timing = timing;
        this.requestedAt = requestedAt;
        this.deadline = requestedAt + timing.validity().toNanos();
    }

    /** The time on the clock validity is measured on. */
    long now() {
        return clock.getAsLong();
    }

    /** How long until the deadline; not positive once it passed. */
    synchronized long nanosLeft() {
        return deadline - clock.getAsLong();
    }

    /** When the first renewal is due: counted from the request, so that a slow grant does not push it late. */
    long firstRenewalIn() {
        return timing.renewEvery().toNanos() - (clock.getAsLong() - requestedAt);
    }

    /**
     * A renewal sent at {@code start} was answered: the grant is still ours. Validity is extended from {@code start},
     * never from the answer's arrival, and only while it has not run out: once this process could have seen the lease
     * invalid, a renewal answered late must not make it valid again, so a passed deadline never moves.
     *
     * @return whether the answer came in time (the deadline then moved, unless it was later already)
     */
    synchronized boolean extendFrom(long start) {
        if (deadline - clock.getAsLong() <= 0) {
            return false;
        }
        long extended = start + timing.validity().toNanos();
        if (extended - deadline > 0) {
            deadline = extended;
        }
        return true;
    }

    /** Why a lease whose deadline passed is lost. */
    String expired() {
        return "its local validity (ttl " + Durations.format(timing.ttl())
                + (timing.validity().equals(timing.ttl()) ? "" : ", of which " + Durations.format(timing.validity())
                        + " usable") + ") ran out before a renewal succeeded";
    }
}
