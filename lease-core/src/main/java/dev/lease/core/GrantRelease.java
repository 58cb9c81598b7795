package dev.lease.core;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;

/**
 * The end of one grant at the store: released with the grant this process holds (the backend checks the owner, so a
 * holder whose lease expired can never release its successor's), and the name freed for this engine's other waiters
 * once the release returned, or once the lease was declared lost, or at the latest when the store may have let the
 * grant expire, should the release hang.
 */
final class GrantRelease {

    private static final Log log = LogFactory.getLog(GrantRelease.class);

    private final BackendGrant<?> granted;
    private final String name;
    /** How log lines name the grant: {@code 'invoice-42' (token 7)}. */
    private final String nameAndToken;
    private final Timing timing;
    private final RenewalExecutors executors;
    /** Run once the grant stops blocking this engine's other waiters for the name (released or lost). */
    private Runnable whenFreed;
    private boolean freed;
    /** Frees the name for local waiters once the store may have let the grant expire, should the release hang. */
    private Future<?> freeFallback;
    /** Whether this engine's threads queue for the name now; until told, assume they do. */
    private volatile BooleanSupplier localWaiters = () -> true;
    /** The release began: from then on, a local waiter arms the fallback, due at {@link #fallbackAt}. */
    private boolean releasing;
    private boolean armed;
    private long fallbackAt;

    GrantRelease(BackendGrant<?> granted, String name, String nameAndToken, Timing timing,
            RenewalExecutors executors) {
        this.granted = granted;
        this.name = name;
        this.nameAndToken = nameAndToken;
        this.timing = timing;
        this.executors = executors;
    }

    /**
     * Releases the grant of a lease just closed. After a loss the release is only a courtesy (the store may still hold
     * our grant and free it sooner this way); it then runs in the background when allowed, so that a store that hangs
     * cannot delay the holder's LeaseLostException.
     *
     * @param nanosLeft the lease's validity left: local waiters wait for the release no longer than this
     */
    void release(boolean wasLost, boolean lostInBackground, long nanosLeft) {
        // Local waiters queue behind this grant until its release returns; a release hanging on a dead connection
        // must not hold them past the time the store lets the grant expire, after which the store decides. The
        // fallback is armed only when someone waits here, now or later (waiterQueued): scheduled on the engine's
        // timer, it woke the timer thread on the path of every handover (about 100 us of a ZooKeeper one).
        synchronized (this) {
            releasing = true;
            fallbackAt = System.nanoTime() + Math.max(0, nanosLeft);
        }
        if (localWaiters.getAsBoolean()) {
            armFallback();
        }
        if (wasLost && lostInBackground) {
            executors.runInBackground(granted.backend().id(), () -> releaseAndFree(true));
        }
        else {
            // The release is owner-checked by the backend, so it is safe even after a loss; it must run even if this
            // thread carries an interrupt.
            RenewalExecutors.withoutInterrupt(() -> releaseAndFree(wasLost));
        }
    }

    /** Tells whether this engine's threads queue for the name now; called once, before the release. */
    void localWaiters(BooleanSupplier queued) {
        localWaiters = queued;
    }

    /**
     * A local waiter queued behind this grant: if the release has begun, the name must be freed for it at the latest
     * when the store may have let the grant expire. Before the release, {@link #release} sees the waiter itself.
     */
    void waiterQueued() {
        armFallback();
    }

    /**
     * Runs {@code hook} once, when the grant stops blocking this engine's other waiters for the name: right after its
     * release at the store (done or failed), or when it is declared lost, whichever comes first; at once if it did.
     */
    void whenFreed(Runnable hook) {
        synchronized (this) {
            if (!freed) {
                whenFreed = hook;
                return;
            }
        }
        hook.run();
    }

    /** The grant no longer blocks the name here; idempotent. */
    void freed() {
        Runnable hook;
        synchronized (this) {
            if (freed) {
                return;
            }
            freed = true;
            hook = whenFreed;
            whenFreed = null;
            if (freeFallback != null) {
                freeFallback.cancel(false);
                freeFallback = null;
            }
        }
        if (hook != null) {
            hook.run();
        }
    }

    /** Schedules the fallback once, after the release began and before the grant is freed. */
    private void armFallback() {
        long nanos;
        synchronized (this) {
            if (!releasing || freed || armed) {
                return;
            }
            armed = true;
            nanos = fallbackAt - System.nanoTime();
        }
        try {
            Future<?> fallback = executors.timer().schedule(this::freed, Math.max(0, nanos), TimeUnit.NANOSECONDS);
            synchronized (this) {
                if (freed) {
                    fallback.cancel(false);
                }
                else {
                    freeFallback = fallback;
                }
            }
        }
        catch (RejectedExecutionException engineClosed) {
            // Closing wakes every queued waiter itself.
        }
    }

    private void releaseAndFree(boolean wasLost) {
        try {
            releaseGrant(wasLost);
        }
        finally {
            freed();
        }
    }

    private void releaseGrant(boolean wasLost) {
        String backend = granted.backend().id();
        try {
            granted.release();
            if (log.isDebugEnabled()) {
                log.debug("Lease " + nameAndToken + " released on " + backend + (wasLost ? " after its loss" : ""));
            }
        }
        catch (Exception ex) {
            String message = "Could not release lease '" + name + "' on " + backend + " (it will expire on its own "
                    + "within " + Durations.format(timing.ttl()) + "): " + ex;
            if (wasLost) {
                log.debug(message);
            }
            else {
                log.warn(message);
            }
        }
    }
}
