package dev.lease.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

/**
 * One grant held by this process: its monotonic validity, its renewal, and what happens when it is lost.
 *
 * <p>Validity is a deadline on the monotonic clock, set to (time before the request was sent) + ttl, less the
 * backend's {@link dev.lease.spi.BackendTraits#validityMargin margin}, and moved only by a successful renewal, the same way. The store's clock decides when the grant expires on the server;
 * the deadline only makes sure this process stops believing in the lease no later than the store could.
 */
final class HeldLease implements Lease {

    private static final Log log = LogFactory.getLog(HeldLease.class);

    private final String name;
    private final LeaseKind kind;
    private final LeaseDescription description;
    private final LeaseEngineListener listener;
    private final LeaseBackend<?> backend;
    private final Grant grant;
    private final BackendGrant<?> granted;
    private final Timing timing;
    private final RenewalExecutors executors;
    private final RenewalBatcher renewals;
    private final LongSupplier clock;
    private final Consumer<HeldLease> onClose;

    private final Object lock = new Object();
    private final long requestedAt;
    private long deadline;
    private volatile boolean lost;
    private volatile boolean closed;
    private String lossReason;
    /** The threads running a section of this lease: one for a leased call, any number for a leadership term. */
    private final List<ThreadLeases.Frames> boundTo = new ArrayList<>();
    private Runnable whenLost;
    /** Told of a declared loss, after the threads: sections not bound to a thread (reactive pipelines). */
    private final List<Runnable> lossWatchers = new ArrayList<>();
    /** A leadership term: its election ends it, not the code running in it. */
    private volatile boolean term;
    private Future<?> watchdog;
    private Runnable whenClosed;
    /** Run once the grant stops blocking this engine's other waiters for the name (released or lost). */
    private Runnable whenFreed;
    private boolean freed;
    /** Frees the name for local waiters once the store may have let the grant expire, should the release hang. */
    private Future<?> freeFallback;

    HeldLease(LeaseDescription description, BackendGrant<?> granted, Timing timing, long requestedAt,
            RenewalExecutors executors, RenewalBatcher renewals, LongSupplier clock, Consumer<HeldLease> onClose,
            LeaseEngineListener listener) {
        this.description = description;
        this.name = description.name();
        this.kind = description.kind();
        this.listener = listener;
        this.granted = granted;
        this.backend = granted.backend();
        this.grant = granted.grant();
        this.timing = timing;
        this.executors = executors;
        this.renewals = renewals;
        this.clock = clock;
        this.onClose = onClose;
        this.requestedAt = requestedAt;
        this.deadline = requestedAt + timing.validity().toNanos();
    }

    void start() {
        synchronized (lock) {
            if (lost || closed) {
                return;
            }
            // Counted from the request, like the validity: a slow grant must not push the first renewal late.
            scheduleRenewal(timing.renewEvery().toNanos() - (clock.getAsLong() - requestedAt));
            watchdog = executors.timer().schedule(this::checkDeadline, nanosLeft(), TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LeaseKind kind() {
        return kind;
    }

    @Override
    public FencingToken token() {
        OptionalLong token = grant.token();
        if (token.isEmpty()) {
            throw new IllegalStateException("Lease '" + name + "' has no fencing token: "
                    + backend.traits().whyNotFenced().orElse("the " + backend.id() + " backend gave its grant none")
                    + ". Route work that needs a token to a fenced backend (lease.correctness-backend: zookeeper or jdbc).");
        }
        return new FencingToken(name, token.getAsLong());
    }

    @Override
    public boolean hasToken() {
        return grant.token().isPresent();
    }

    LeaseDescription description() {
        return description;
    }

    OptionalLong grantToken() {
        return grant.token();
    }

    FencingToken tokenOrNull() {
        return hasToken() ? token() : null;
    }

    /** How log lines name this grant: {@code 'invoice-42' (token 7)}. */
    String nameAndToken() {
        return "'" + name + "'" + (hasToken() ? " (token " + grant.token().getAsLong() + ")" : "");
    }

    @Override
    public boolean isValid() {
        if (lost || closed) {
            return false;
        }
        synchronized (lock) {
            return nanosLeft() > 0;
        }
    }

    /** Lost, as opposed to released: the holder must be told. Includes a local deadline the watchdog has yet to see. */
    boolean isLost() {
        return lost || (!closed && !isValid());
    }

    /** Declared lost (the holder was or is being interrupted); unlike {@link #isLost()}, not a mere passed deadline. */
    boolean isMarkedLost() {
        return lost;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public Duration remaining() {
        if (lost || closed) {
            return Duration.ZERO;
        }
        synchronized (lock) {
            return Duration.ofNanos(Math.max(0, nanosLeft()));
        }
    }

    @Override
    public void checkValid() {
        if (!isValid()) {
            throw lostException(null);
        }
    }

    LeaseLostException lostException(Throwable cause) {
        String reason;
        synchronized (lock) {
            reason = lossReason != null ? lossReason
                    : nanosLeft() <= 0 ? expired()
                    : "it was released (closed) before the work was done";
        }
        return new LeaseLostException(name, tokenOrNull(), reason, cause);
    }

    /**
     * This lease as it stands now, or null once it is lost, released or past its local deadline: a lease whose holder
     * is still unwinding from a loss is not held any more.
     */
    HeldLeaseSnapshot snapshot() {
        synchronized (lock) {
            long left = nanosLeft();
            if (lost || closed || left <= 0) {
                return null;
            }
            return new HeldLeaseSnapshot(name, kind, backend.id(), grant.token(), Duration.ofNanos(left),
                    boundTo.isEmpty() ? null
                            : boundTo.stream().map(frames -> frames.thread().getName()).collect(Collectors.joining(", ")));
        }
    }

    void bindTo(ThreadLeases.Frames frames) {
        synchronized (lock) {
            boundTo.add(frames);
        }
    }

    /** The thread left its section of this lease, which stays held (a leadership term). */
    void unbind(ThreadLeases.Frames frames) {
        synchronized (lock) {
            boundTo.remove(frames);
        }
    }

    void markAsTerm() {
        term = true;
    }

    /** Runs {@code hook} once, when the lease is declared lost, after its threads were interrupted: at once if it was. */
    void whenLost(Runnable hook) {
        synchronized (lock) {
            if (!lost) {
                whenLost = hook;
                return;
            }
        }
        hook.run();
    }

    /**
     * Runs {@code watcher} when the lease is declared lost, right after its threads were interrupted: at once if it
     * was. Any number may watch; for sections that run on no thread of their own, which an interrupt cannot reach.
     *
     * @return what stops the watching when the section ends first (a leadership term outlives many sections)
     */
    Runnable watchLoss(Runnable watcher) {
        synchronized (lock) {
            if (!lost) {
                lossWatchers.add(watcher);
                return () -> {
                    synchronized (lock) {
                        lossWatchers.remove(watcher);
                    }
                };
            }
        }
        watcher.run();
        return () -> { };
    }

    /** Why it was declared lost, or null while it was not. */
    String lossReason() {
        synchronized (lock) {
            return lost ? lossReason : null;
        }
    }

    /** Turns the lease invalid now and interrupts the thread running its section, if any. Idempotent. */
    void markLost(LossCause cause, String reason) {
        Runnable announce = invalidate(cause, reason);
        if (announce != null) {
            announce.run();
        }
    }

    /**
     * Turns the lease invalid now and returns the rest of its loss (interrupting the thread running its section,
     * the log line, the listeners, freeing the name) for the caller to run; null when it was lost or closed already.
     * Closing the engine invalidates every lease before it announces any loss, so that no holder reacting to its own
     * loss still sees another lease of the engine valid.
     */
    Runnable invalidate(LossCause cause, String reason) {
        List<ThreadLeases.Frames> frames;
        List<Runnable> watchers;
        Runnable hook;
        synchronized (lock) {
            if (lost || closed) {
                return null;
            }
            lost = true;
            lossReason = reason;
            cancelTasks();
            frames = List.copyOf(boundTo);
            watchers = List.copyOf(lossWatchers);
            lossWatchers.clear();
            hook = whenLost;
        }
        return () -> announceLoss(cause, reason, frames, watchers, hook);
    }

    private void announceLoss(LossCause cause, String reason, List<ThreadLeases.Frames> frames,
            List<Runnable> watchers, Runnable hook) {
        String message = "Lease " + nameAndToken() + " on " + backend.id() + " lost (" + cause.tag() + "): " + reason
                + (frames.isEmpty() ? "" : "; interrupting "
                        + frames.stream().map(ThreadLeases.Frames::threadName).collect(Collectors.joining(", ")));
        // Interrupting comes first: the work must stop as soon as possible, whatever a listener does.
        frames.forEach(bound -> bound.interruptFor(this));
        watchers.forEach(HeldLease::runWatcher);
        // A yield, or a shutdown that interrupted no work (an idle leadership term), is expected, not a warning.
        if (cause == LossCause.YIELDED || (cause == LossCause.SHUTDOWN && frames.isEmpty() && term)) {
            log.info(message);
        }
        else {
            log.warn(message);
        }
        listener.lost(description, grant.token(), cause);
        if (hook != null) {
            hook.run();
        }
        freed();
    }

    private static void runWatcher(Runnable watcher) {
        try {
            watcher.run();
        }
        catch (RuntimeException ex) {
            // One section's failure to hear of the loss must not keep the others, or the release, from it.
            log.error("A loss watcher failed", ex);
        }
    }

    /**
     * Releases the lease.
     *
     * @throws IllegalStateException for a leadership term, which code running in it cannot end this way: closing it
     *         here would leave the election believing it still leads
     */
    @Override
    public void close() {
        if (term) {
            throw new IllegalStateException("Lease '" + name + "' is a leadership term: end it with "
                    + "Leadership.yieldLeadership() (LeaderElections.get(\"" + name + "\")), not by closing its lease");
        }
        close(true);
    }

    /**
     * Releases the grant. After a loss the release is only a courtesy (the store may still hold our grant and free
     * it sooner this way); it then runs in the background when allowed, so that a store that hangs cannot delay
     * the holder's LeaseLostException.
     */
    void close(boolean releaseLostInBackground) {
        boolean wasLost;
        Runnable closedHook;
        synchronized (lock) {
            if (closed) {
                return;
            }
            wasLost = lost;
            closed = true;
            cancelTasks();
            closedHook = whenClosed;
        }
        onClose.accept(this);
        if (closedHook != null) {
            closedHook.run();
        }
        // Local waiters queue behind this grant until its release returns; a release hanging on a dead connection
        // must not hold them past the time the store lets the grant expire, after which the store decides.
        freeAtTheLatestIn(nanosLeft());
        if (wasLost && releaseLostInBackground) {
            executors.runInBackground(backend.id(), () -> release(true));
        }
        else {
            // The release is owner-checked by the backend, so it is safe even after a loss; it must run even if this
            // thread carries an interrupt.
            RenewalExecutors.withoutInterrupt(() -> release(wasLost));
        }
    }

    private void freeAtTheLatestIn(long nanos) {
        try {
            Future<?> fallback = executors.timer().schedule(this::freed, Math.max(0, nanos), TimeUnit.NANOSECONDS);
            synchronized (lock) {
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

    private void release(boolean wasLost) {
        try {
            releaseGrant(wasLost);
        }
        finally {
            freed();
        }
    }

    private void releaseGrant(boolean wasLost) {
        try {
            granted.release();
            if (log.isDebugEnabled()) {
                log.debug("Lease " + nameAndToken() + " released on " + backend.id() + (wasLost ? " after its loss" : ""));
            }
        }
        catch (Exception ex) {
            String message = "Could not release lease '" + name + "' on " + backend.id() + " (it will expire on its own "
                    + "within " + Durations.format(timing.ttl()) + "): " + ex;
            if (wasLost) {
                log.debug(message);
            }
            else {
                log.warn(message);
            }
        }
    }

    /** Runs {@code hook} once the lease is closed: at once if it already is. */
    void whenClosed(Runnable hook) {
        synchronized (lock) {
            if (!closed) {
                whenClosed = hook;
                return;
            }
        }
        hook.run();
    }

    /**
     * Runs {@code hook} once, when the grant stops blocking this engine's other waiters for the name: right after its
     * release at the store (done or failed), or when it is declared lost, whichever comes first; at once if it did.
     */
    void whenFreed(Runnable hook) {
        synchronized (lock) {
            if (!freed) {
                whenFreed = hook;
                return;
            }
        }
        hook.run();
    }

    private void freed() {
        Runnable hook;
        synchronized (lock) {
            if (freed) {
                return;
            }
            freed = true;
            hook = whenFreed;
            whenFreed = null;
            cancel(freeFallback, false);
            freeFallback = null;
        }
        if (hook != null) {
            hook.run();
        }
    }

    /** Under the lock: the next renewal goes on the backend's schedule, which sends it with others due about then. */
    private void scheduleRenewal(long delayNanos) {
        renewals.schedule(this, delayNanos, timing.renewEvery().toNanos());
    }

    /** Neither lost nor closed: worth renewing. Reads no lock, so the batcher may ask while holding its own. */
    boolean isActive() {
        return !lost && !closed;
    }

    Grant grant() {
        return grant;
    }

    /** One renewal of this lease alone, on the backend's I/O pool (a backend that does not renew in batches). */
    void renewOnce() {
        if (!isActive()) {
            return;
        }
        long start = clock.getAsLong();
        boolean stillOurs;
        try {
            stillOurs = granted.renew();
        }
        catch (Exception ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            renewalThrew(start, ex);
            return;
        }
        renewalAnswered(start, stillOurs);
    }

    /**
     * The renewal call started at {@code start} (on the validity clock) threw: the lease is lost, since a grant that
     * cannot be confirmed may already be someone else's. For a batch, every lease of it hears this.
     */
    void renewalThrew(long start, Exception ex) {
        if (!isActive()) {
            return; // released or lost while the call was out: not a failed renewal of a lease still held
        }
        if (ex instanceof InterruptedException) {
            renewalFailed(start, "was interrupted", ex);
            markLost(LossCause.RENEWAL_FAILED, "renewal was interrupted");
            return;
        }
        renewalFailed(start, "failed", ex);
        markLost(LossCause.RENEWAL_FAILED, "renewal failed: " + ex);
    }

    /**
     * The store answered the renewal call started at {@code start} (on the validity clock): still ours or not.
     * Validity is extended from {@code start}, never from the answer's arrival, and only while it has not run out.
     */
    void renewalAnswered(long start, boolean stillOurs) {
        if (!isActive()) {
            return; // released or lost while the call was out (batches go early, so this is common): nothing to report
        }
        if (!stillOurs) {
            renewalFailed(start, "was refused (the grant is no longer held)", null);
            markLost(LossCause.BACKEND_REPORTED,
                    "the " + backend.id() + " backend no longer holds this grant (expired, taken over or deleted)");
            return;
        }
        boolean inTime;
        synchronized (lock) {
            if (lost || closed) {
                return;
            }
            // Validity is monotone: once this process could have seen the lease invalid, a renewal answered late
            // must not make it valid again, so a passed deadline never moves.
            inTime = nanosLeft() > 0;
            if (inTime) {
                long extended = start + timing.validity().toNanos();
                if (extended - deadline > 0) {
                    deadline = extended;
                }
                scheduleRenewal(timing.renewEvery().toNanos() - (clock.getAsLong() - start));
            }
        }
        if (inTime) {
            listener.renewed(description, true);
            return;
        }
        renewalFailed(start, "succeeded too late (after the local validity ran out)", null);
        markLost(LossCause.DEADLINE, expired());
    }

    /** The loss that follows is logged at WARN; this adds the backend's own error and how long the call took. */
    private void renewalFailed(long start, String outcome, Throwable cause) {
        listener.renewed(description, false);
        if (log.isDebugEnabled()) {
            log.debug("Renewal of lease " + nameAndToken() + " on " + backend.id() + " " + outcome + " after "
                    + Durations.formatNanos(clock.getAsLong() - start), cause);
        }
    }

    private void checkDeadline() {
        synchronized (lock) {
            if (lost || closed) {
                return;
            }
            long left = nanosLeft();
            if (left > 0) {
                watchdog = executors.timer().schedule(this::checkDeadline, left, TimeUnit.NANOSECONDS);
                return;
            }
        }
        markLost(LossCause.DEADLINE, expired());
    }

    private String expired() {
        return "its local validity (ttl " + Durations.format(timing.ttl())
                + (timing.validity().equals(timing.ttl()) ? "" : ", of which " + Durations.format(timing.validity())
                        + " usable") + ") ran out before a renewal succeeded";
    }

    private long nanosLeft() {
        return deadline - clock.getAsLong();
    }

    private void cancelTasks() {
        renewals.cancel(this);
        cancel(watchdog, false);
        // A renewal in flight is abandoned, never interrupted: its answer is ignored once the lease is lost or
        // closed, and the store call is shared with the other leases of its batch, which an interrupt would fail.
    }

    private static void cancel(Future<?> future, boolean interrupt) {
        if (future != null) {
            future.cancel(interrupt);
        }
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", " + kind + ", " + backend.id()
                + (hasToken() ? ", token " + grant.token().getAsLong() : "") + (isValid() ? ", valid" : ", invalid") + "]";
    }
}
