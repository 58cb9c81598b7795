package dev.lease.core;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * When a lease closed before its {@code holdAtLeast} had passed is released: at that time after its grant, on the
 * clock its validity is measured on (monotonic), by the engine's timer, whose thread only hands the release to the
 * backend's I/O pool. Until then the lease stays held and renewed, so that every grant request for the name finds it
 * busy, which is the point: a short scheduled job must not leave its name free for another instance's later tick.
 */
final class HoldOver {

    private final long holdNanos;
    /** When the hold ends, on the validity clock; meaningless while {@link #holdNanos} is 0. */
    private final long until;
    private final RenewalExecutors executors;
    /** False while the engine keeps no lease after its work: it is stopping (the application shuts down). */
    private final BooleanSupplier allowed;
    private Future<?> end;
    private boolean cancelled;

    /**
     * @param holdAtLeast how long after the grant the lease is kept at least; zero for no hold
     * @param grantedAt when the grant was answered, on the validity clock
     * @param allowed whether the engine keeps leases after their work at the moment they are closed
     */
    HoldOver(Duration holdAtLeast, long grantedAt, RenewalExecutors executors, BooleanSupplier allowed) {
        this.holdNanos = holdAtLeast.toNanos();
        this.until = grantedAt + holdNanos;
        this.executors = executors;
        this.allowed = allowed;
    }

    /** How long the lease must still be held at {@code now}; not positive when it need not be held any more. */
    long nanosLeft(long now) {
        return holdNanos <= 0 || !allowed.getAsBoolean() ? 0 : until - now;
    }

    /**
     * Runs {@code release} (store I/O) on the backend's pool in {@code nanos}; at once, here, when the engine's timer
     * has stopped (the engine is closing, and a graceful shutdown releases what it holds).
     */
    void releaseIn(long nanos, String backendId, Runnable release) {
        Future<?> scheduled;
        try {
            scheduled = executors.timer().schedule(() -> executors.runInBackground(backendId, release), nanos,
                    TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException engineClosing) {
            release.run();
            return;
        }
        synchronized (this) {
            if (cancelled) {
                scheduled.cancel(false);
            }
            else {
                end = scheduled;
            }
        }
    }

    /** The lease was released by other means (the engine closing, a loss): no release is due any more. */
    void cancel() {
        Future<?> scheduled;
        synchronized (this) {
            cancelled = true;
            scheduled = end;
            end = null;
        }
        if (scheduled != null) {
            scheduled.cancel(false);
        }
    }
}
