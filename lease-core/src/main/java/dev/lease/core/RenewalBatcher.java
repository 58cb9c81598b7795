package dev.lease.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

/**
 * Sends the renewals of one backend's held leases, so that holding many leases costs few store round trips.
 *
 * <p>Every held lease is on a schedule, at the time its renewal is due. When the first renewal falls due, the timer
 * sends it together with every renewal due within a quarter of that lease's renewal interval ({@link #COALESCE}):
 * those are sent early, which is safe (validity is extended from the time the call started), while none is ever
 * sent later than it is due. Leases renewed together stay together, since their next renewals are due at the same
 * time, so leases with the same timing end up sharing one call per interval. While a batch is in flight the next one
 * collects: when the answer comes, renewals falling due within their window go out at once (group commit), and
 * otherwise at their due time, in a call of their own if the one in flight has still not returned (a hung call
 * does not hold a renewal back past its due time while the backend's I/O pool has a free thread; once every thread
 * of it hangs, batches queue there, and the local deadlines, kept by the timer, still end the leases on time).
 *
 * <p>A backend whose {@link dev.lease.spi.BackendTraits#renewsInOneCall() traits} say it renews in one call gets one
 * {@link LeaseBackend#renewAll} call per batch, on its own I/O pool. Any other gets each renewal as its own
 * {@link LeaseBackend#renew} call on that pool, when it is due and not earlier: the one-by-one default of renewAll
 * would put the renewals of a batch in series.
 *
 * <p>The timer thread only reads and changes the schedule; store calls run on the backend's I/O pool. Locks are
 * taken in the order lease, then batcher: nothing here calls into a lease while holding the batcher's lock.
 */
final class RenewalBatcher {

    private static final Log log = LogFactory.getLog(RenewalBatcher.class);

    /** Renewals due within this fraction of their interval after the batch's first one go with it, early. */
    static final int COALESCE = 4;

    /** Batches stay within what one store statement or script comfortably takes; more go as several calls. */
    static final int MAX_BATCH = 500;

    /** By due time, compared by difference as {@link System#nanoTime()} values must be; then first come first. */
    private static final Comparator<Due> ORDER = (a, b) -> {
        int byTime = Long.signum(a.at - b.at);
        return byTime != 0 ? byTime : Long.compare(a.seq, b.seq);
    };

    private final LeaseBackend<?> backend;
    private final boolean batched;
    private final RenewalExecutors executors;
    /** The clock validity is measured on: a batch's start, from which its leases are extended, is read from it. */
    private final LongSupplier validityClock;

    private final Object lock = new Object();
    private final TreeSet<Due> schedule = new TreeSet<>(ORDER);
    private final Map<LeaseRenewal, Due> scheduled = new HashMap<>();
    private long sequence;
    private long maxSlack;
    private Future<?> wake;
    private long wakeAt;

    /** A backend that cannot say (its store unreachable right now) is renewed one grant at a time, which is safe. */
    private static boolean asksInOneCall(LeaseBackend<?> backend) {
        try {
            return backend.traits().renewsInOneCall();
        }
        catch (RuntimeException ex) {
            log.warn("The " + backend.id() + " backend could not say whether it renews many grants in one call ("
                    + ex + "): its leases are renewed one call each", ex);
            return false;
        }
    }

    RenewalBatcher(LeaseBackend<?> backend, RenewalExecutors executors, LongSupplier validityClock) {
        this.backend = backend;
        this.batched = asksInOneCall(backend);
        this.executors = executors;
        this.validityClock = validityClock;
    }

    /**
     * Puts the lease's next renewal on the schedule, replacing the one it had.
     *
     * @param delayNanos in how long the renewal is due (at once when not positive)
     * @param renewEveryNanos the lease's renewal interval, which bounds how early it may be renewed
     */
    void schedule(LeaseRenewal lease, long delayNanos, long renewEveryNanos) {
        synchronized (lock) {
            scheduleLocked(lease, delayNanos, renewEveryNanos);
        }
    }

    /**
     * Moves the lease's scheduled renewal to now, for a confirmation. False when none is on the schedule: one is in
     * flight (its answer puts the next on the schedule) or the lease ended. Two renewals of one lease never go out
     * side by side: where renewals are conditional writes (a Kubernetes Lease's resourceVersion), the store would
     * refuse one of them, and the lease would be lost to its own holder.
     */
    boolean hurry(LeaseRenewal lease, long renewEveryNanos) {
        synchronized (lock) {
            if (!scheduled.containsKey(lease)) {
                return false;
            }
            scheduleLocked(lease, 0, renewEveryNanos);
            return true;
        }
    }

    private void scheduleLocked(LeaseRenewal lease, long delayNanos, long renewEveryNanos) {
        long now = System.nanoTime();
        Due previous = scheduled.remove(lease);
        if (previous != null) {
            schedule.remove(previous);
        }
        long slack = batched ? renewEveryNanos / COALESCE : 0;
        Due due = new Due(lease, now + Math.max(0, delayNanos), slack, sequence++);
        schedule.add(due);
        scheduled.put(lease, due);
        maxSlack = Math.max(maxSlack, slack);
        if (schedule.first() == due) {
            arm();
        }
    }

    /** Takes the lease off the schedule (closed or lost); a batch already in flight ignores its answer for it. */
    void cancel(LeaseRenewal lease) {
        synchronized (lock) {
            Due due = scheduled.remove(lease);
            if (due != null) {
                schedule.remove(due);
            }
        }
    }

    /** How many renewals wait on the schedule; for tests. */
    int scheduledCount() {
        synchronized (lock) {
            return scheduled.size();
        }
    }

    private void onWake() {
        try {
            List<List<LeaseRenewal>> batches;
            synchronized (lock) {
                wake = null;
                batches = takeDue(false);
            }
            send(batches);
        }
        catch (RuntimeException | Error ex) {
            // Nobody reads the timer task's future: without this, renewals taken off the schedule would vanish in
            // silence (their leases then end at their deadlines, safely, but unexplained).
            log.error("Renewals on " + backend.id() + " could not be sent", ex);
        }
    }

    /** A batch was answered: what collected meanwhile goes now. */
    private void completed() {
        List<List<LeaseRenewal>> batches;
        synchronized (lock) {
            batches = takeDue(true);
        }
        send(batches);
    }

    /** Under the lock: the batches to send now, removed from the schedule; re-arms the timer for what remains. */
    private List<List<LeaseRenewal>> takeDue(boolean answerCame) {
        long now = System.nanoTime();
        List<List<LeaseRenewal>> batches = new ArrayList<>();
        while (!schedule.isEmpty()) {
            Due head = schedule.first();
            boolean due = head.at - now <= 0;
            // Group commit: what fell within its window while a batch was in flight goes as soon as the answer came.
            boolean collected = batched && answerCame && head.at - head.slack - now <= 0;
            if (!due && !collected) {
                break;
            }
            List<LeaseRenewal> batch = takeBatch(now);
            if (!batch.isEmpty()) {
                batches.add(batch);
            }
        }
        arm();
        return batches;
    }

    private List<LeaseRenewal> takeBatch(long now) {
        List<LeaseRenewal> batch = new ArrayList<>();
        if (!batched) {
            Due head = schedule.pollFirst();
            scheduled.remove(head.lease);
            if (head.lease.isActive()) {
                batch.add(head.lease);
            }
            return batch;
        }
        // Only renewals due within the largest window can be early enough to join; sorted by due time, so the scan
        // stops there.
        Iterator<Due> candidates = schedule.iterator();
        while (candidates.hasNext() && batch.size() < MAX_BATCH) {
            Due candidate = candidates.next();
            if (candidate.at - now - maxSlack > 0) {
                break;
            }
            if (candidate.at - candidate.slack - now <= 0) {
                candidates.remove();
                scheduled.remove(candidate.lease);
                if (candidate.lease.isActive()) {
                    batch.add(candidate.lease);
                }
            }
        }
        return batch;
    }

    /** Under the lock: the timer wakes when the first renewal on the schedule is due. */
    private void arm() {
        if (schedule.isEmpty()) {
            cancelWake();
            return;
        }
        long at = schedule.first().at;
        if (wake != null && wakeAt == at) {
            return;
        }
        cancelWake();
        try {
            wake = executors.timer().schedule(this::onWake, at - System.nanoTime(), TimeUnit.NANOSECONDS);
            wakeAt = at;
        }
        catch (RejectedExecutionException closed) {
            // The engine is closed: every lease was declared lost before, nothing needs renewing any more.
            wake = null;
        }
    }

    private void cancelWake() {
        if (wake != null) {
            wake.cancel(false);
            wake = null;
        }
    }

    private void send(List<List<LeaseRenewal>> batches) {
        for (List<LeaseRenewal> batch : batches) {
            try {
                if (batched) {
                    executors.io(backend.id()).execute(() -> renewInOneCall(batch));
                }
                else {
                    executors.io(backend.id()).execute(batch.get(0)::renewOnce);
                }
            }
            catch (RejectedExecutionException closed) {
                // The engine is closed: its leases were declared lost before, a straggler is now.
                long start = validityClock.getAsLong();
                batch.stream().filter(LeaseRenewal::isActive).forEach(lease -> lease.threw(start, closed));
            }
        }
    }

    /** On the backend's I/O pool: one {@link LeaseBackend#renewAll} call for the whole batch, then each lease's part. */
    private void renewInOneCall(List<LeaseRenewal> batch) {
        try {
            // Closed or lost since the batch was taken: not renewed, its answer would be ignored anyway.
            List<LeaseRenewal> leases = batch.stream().filter(LeaseRenewal::isActive).toList();
            if (leases.isEmpty()) {
                return;
            }
            List<Grant> grants = leases.stream().map(LeaseRenewal::grant).toList();
            // Read before the call: validity is extended from a time the store's renewal cannot precede.
            long start = validityClock.getAsLong();
            Set<? extends Grant> lost;
            try {
                lost = BackendGrant.renewAll(backend, grants);
                if (lost == null) {
                    throw new IllegalStateException(backend.id() + " answered null to the renewal of "
                            + grants.size() + " leases");
                }
            }
            catch (Exception ex) {
                if (ex instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                leases.forEach(lease -> answer(lease, () -> lease.threw(start, ex)));
                return;
            }
            if (!grants.containsAll(lost)) {
                // The answer names grants it was not asked about: it cannot be trusted for the others either.
                IllegalStateException confused = new IllegalStateException(backend.id() + " reported as lost grants "
                        + "that were not in the renewal call");
                leases.forEach(lease -> answer(lease, () -> lease.threw(start, confused)));
                return;
            }
            for (LeaseRenewal lease : leases) {
                answer(lease, () -> lease.answered(start, !lost.contains(lease.grant())));
            }
        }
        finally {
            completed();
        }
    }

    /** One lease's part of an answer; a failure there (a listener's, say) must not keep the others from theirs. */
    private void answer(LeaseRenewal lease, Runnable part) {
        try {
            part.run();
        }
        catch (RuntimeException | Error ex) {
            log.error("Handling the renewal answer of " + lease + " on " + backend.id() + " failed", ex);
        }
    }

    /** A renewal on the schedule: due at {@code at} (System.nanoTime), and may go up to {@code slack} earlier. */
    private record Due(LeaseRenewal lease, long at, long slack, long seq) {
    }
}
