package dev.lease.core;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.spi.Grant;

/**
 * Keeps one held lease alive: its renewals go on its backend's schedule ({@link RenewalBatcher}), each answer moves
 * its {@link Validity} or loses it, and a watchdog on the engine's timer loses it the moment its deadline passes
 * without a renewal, whatever the store is doing.
 *
 * <p>Shares the lease's lock: losing or closing the lease cancels its renewal under that lock, and nothing here
 * schedules anything under it once the lease is lost or closed, so no renewal or watchdog outlives the lease.
 */
final class LeaseRenewal {

    private static final Log log = LogFactory.getLog(LeaseRenewal.class);

    private final HeldLease lease;
    private final BackendGrant<?> granted;
    private final Timing timing;
    private final Validity validity;
    private final RenewalBatcher batcher;
    private final RenewalExecutors executors;
    private final LeaseEngineListener listener;
    /** The lease's lock. */
    private final Object lock;
    private Future<?> watchdog;
    /** When the latest renewal answered "still ours" in time was sent, on the validity clock; under the lock. */
    private long confirmedFrom;
    /** Whether a caller of {@link #confirm} waits for a renewal sent after it asked; under the lock. */
    private boolean confirmAsked;
    /** When the latest waiting caller of {@link #confirm} asked; under the lock. */
    private long confirmWantedFrom;

    LeaseRenewal(HeldLease lease, BackendGrant<?> granted, Timing timing, Validity validity, RenewalBatcher batcher,
            RenewalExecutors executors, LeaseEngineListener listener, Object lock) {
        this.lease = lease;
        this.granted = granted;
        this.timing = timing;
        this.validity = validity;
        this.batcher = batcher;
        this.executors = executors;
        this.listener = listener;
        this.lock = lock;
        this.confirmedFrom = validity.now() - 1;
    }

    /** Puts the first renewal on the schedule and starts the watchdog, unless the lease was lost or closed already. */
    void start() {
        synchronized (lock) {
            if (!lease.isActive()) {
                return;
            }
            schedule(validity.firstRenewalIn());
            watchdog = executors.timer().schedule(this::checkDeadline, validity.nanosLeft(), TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Sends a renewal at once and waits for its answer, or for a renewal already on the way that was sent after this
     * call began: the store's word that the grant was still held after the caller's last step. With a renewal in
     * flight that was sent before, the next goes out when that one is answered, never beside it.
     *
     * @return true when such a renewal was answered "still ours" in time; false when the lease was lost or closed
     *         first, its validity ran out or the thread was interrupted (its interrupt status is then set again)
     */
    boolean confirm() {
        long asked = validity.now();
        synchronized (lock) {
            try {
                while (lease.isActive() && confirmedFrom - asked < 0) {
                    long left = validity.nanosLeft();
                    if (left <= 0) {
                        return false;
                    }
                    if (!confirmAsked || asked - confirmWantedFrom > 0) {
                        confirmWantedFrom = asked;
                    }
                    if (!confirmAsked) {
                        confirmAsked = true;
                        // A renewal in flight is not doubled: its answer sends the next at once (see answered).
                        batcher.hurry(this, timing.renewEvery().toNanos());
                    }
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
            return lease.isActive() && confirmedFrom - asked >= 0;
        }
    }

    /** Under the lease's lock, as it is lost or closed: nothing more is renewed or watched. */
    void cancel() {
        lock.notifyAll();
        batcher.cancel(this);
        if (watchdog != null) {
            watchdog.cancel(false);
        }
        // A renewal in flight is abandoned, never interrupted: its answer is ignored once the lease is lost or
        // closed, and the store call is shared with the other leases of its batch, which an interrupt would fail.
    }

    /** Neither lost nor closed: worth renewing. Reads no lock, so the batcher may ask while holding its own. */
    boolean isActive() {
        return lease.isActive();
    }

    Grant grant() {
        return granted.grant();
    }

    /** One renewal of this lease alone, on the backend's I/O pool (a backend that does not renew in batches). */
    void renewOnce() {
        if (!isActive()) {
            return;
        }
        long start = validity.now();
        boolean stillOurs;
        try {
            stillOurs = granted.renew();
        }
        catch (Exception ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            threw(start, ex);
            return;
        }
        answered(start, stillOurs);
    }

    /**
     * The renewal call started at {@code start} (on the validity clock) threw: the lease is lost, since a grant that
     * cannot be confirmed may already be someone else's. For a batch, every lease of it hears this.
     */
    void threw(long start, Exception ex) {
        if (!isActive()) {
            return; // released or lost while the call was out: not a failed renewal of a lease still held
        }
        if (ex instanceof InterruptedException) {
            failed(start, "was interrupted", ex);
            lease.markLost(LossCause.RENEWAL_FAILED, "renewal was interrupted");
            return;
        }
        failed(start, "failed", ex);
        lease.markLost(LossCause.RENEWAL_FAILED, "renewal failed: " + ex);
    }

    /**
     * The store answered the renewal call started at {@code start} (on the validity clock): still ours or not. In
     * time, the validity moves ({@link Validity#extendFrom}) and the next renewal goes on the schedule.
     */
    void answered(long start, boolean stillOurs) {
        if (!isActive()) {
            return; // released or lost while the call was out (batches go early, so this is common): nothing to report
        }
        if (!stillOurs) {
            failed(start, "was refused (the grant is no longer held)", null);
            lease.markLost(LossCause.BACKEND_REPORTED, "the " + granted.backend().id()
                    + " backend no longer holds this grant (expired, taken over or deleted)");
            return;
        }
        boolean inTime;
        synchronized (lock) {
            if (!lease.isActive()) {
                return;
            }
            inTime = validity.extendFrom(start);
            if (inTime) {
                if (start - confirmedFrom > 0) {
                    confirmedFrom = start;
                }
                // A confirmation waits for a renewal sent after it asked: one sent before cannot answer it.
                boolean confirmWaits = confirmAsked && start - confirmWantedFrom < 0;
                schedule(confirmWaits ? 0 : timing.renewEvery().toNanos() - (validity.now() - start));
                confirmAsked = confirmWaits;
                lock.notifyAll();
            }
        }
        if (inTime) {
            listener.renewed(lease.description(), true);
            return;
        }
        failed(start, "succeeded too late (after the local validity ran out)", null);
        lease.markLost(LossCause.DEADLINE, validity.expired());
    }

    /** The loss that follows is logged at WARN; this adds the backend's own error and how long the call took. */
    private void failed(long start, String outcome, Throwable cause) {
        listener.renewed(lease.description(), false);
        if (log.isDebugEnabled()) {
            log.debug("Renewal of lease " + lease.nameAndToken() + " on " + granted.backend().id() + " " + outcome
                    + " after " + Durations.formatNanos(validity.now() - start), cause);
        }
    }

    /** Under the lease's lock: the next renewal goes on the backend's schedule, with others due about then. */
    private void schedule(long delayNanos) {
        batcher.schedule(this, delayNanos, timing.renewEvery().toNanos());
    }

    private void checkDeadline() {
        synchronized (lock) {
            if (!lease.isActive()) {
                return;
            }
            long left = validity.nanosLeft();
            if (left > 0) {
                watchdog = executors.timer().schedule(this::checkDeadline, left, TimeUnit.NANOSECONDS);
                return;
            }
        }
        lease.markLost(LossCause.DEADLINE, validity.expired());
    }

    @Override
    public String toString() {
        return lease.toString();
    }
}
