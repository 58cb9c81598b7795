package dev.lease.core;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

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
 * One grant held by this process, and the one place that decides its state: held, then lost (the holder must be
 * told) or closed (released), never both. Its parts do the rest: {@link Validity} (the local deadline on the
 * monotonic clock), {@link LeaseRenewal} (renewals and the watchdog of the deadline), {@link LossAudience} (who is
 * interrupted or told when it is lost), {@link GrantRelease} (the release at the store, and freeing the name for
 * this engine's other waiters) and {@link HoldOver} (a lease closed before its {@code holdAtLeast}: closed for its
 * holder, still held and renewed, and released when the hold ends).
 */
final class HeldLease implements Lease {

    private static final Log log = LogFactory.getLog(HeldLease.class);

    private final String name;
    private final LeaseKind kind;
    private final LeaseDescription description;
    private final LeaseEngineListener listener;
    private final LeaseBackend<?> backend;
    private final Grant grant;
    private final Consumer<HeldLease> onClose;

    private final Object lock = new Object();
    private final Validity validity;
    private final LeaseRenewal renewal;
    private final LossAudience audience = new LossAudience();
    private final GrantRelease release;
    private final HoldOver hold;
    private volatile boolean lost;
    private volatile boolean closed;
    /** Closed by its holder before its holdAtLeast passed: still held at the store, renewed, and listed. */
    private volatile boolean heldOver;
    private String lossReason;
    /** A leadership term: its election ends it, not the code running in it. */
    private volatile boolean term;
    private Runnable whenClosed;

    /**
     * @param requestedAt when the grant request was sent, on {@code clock}: validity counts from there
     * @param clock the clock validity is measured on
     * @param onClose told when the lease is closed, before its release is sent
     * @param holdAtLeast how long after the grant the lease is kept at least, even when closed sooner; zero for none
     * @param mayHoldOver whether the engine keeps leases after their work at the moment one is closed
     */
    HeldLease(LeaseDescription description, BackendGrant<?> granted, Timing timing, long requestedAt,
            RenewalExecutors executors, RenewalBatcher renewals, LongSupplier clock, Consumer<HeldLease> onClose,
            LeaseEngineListener listener, Duration holdAtLeast, BooleanSupplier mayHoldOver) {
        this.description = description;
        this.name = description.name();
        this.kind = description.kind();
        this.listener = listener;
        this.backend = granted.backend();
        this.grant = granted.grant();
        this.onClose = onClose;
        this.validity = new Validity(clock, timing, requestedAt);
        this.renewal = new LeaseRenewal(this, granted, timing, validity, renewals, executors, listener, lock);
        this.release = new GrantRelease(granted, name, nameAndToken(), timing, executors);
        // From the grant's answer, not its request: the hold is a minimum, so it may start late but never early.
        this.hold = new HoldOver(holdAtLeast, validity.now(), executors, mayHoldOver);
    }

    /** Starts renewing and watching the deadline, unless lost or closed already. */
    void start() {
        renewal.start();
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
        return validity.nanosLeft() > 0;
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

    /**
     * Neither lost nor released (closed but held over counts as held): worth renewing. Reads no lock, so the renewal
     * batcher may ask while holding its own.
     */
    boolean isActive() {
        return !lost && (!closed || heldOver);
    }

    @Override
    public Duration remaining() {
        if (lost || closed) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, validity.nanosLeft()));
    }

    @Override
    public void checkValid() {
        if (!isValid()) {
            throw lostException(null);
        }
    }

    @Override
    public void confirm() {
        if (!renewal.confirm()) {
            throw lostException(null);
        }
        checkValid();
    }

    LeaseLostException lostException(Throwable cause) {
        String reason;
        synchronized (lock) {
            reason = lossReason != null ? lossReason
                    : validity.nanosLeft() <= 0 ? validity.expired()
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
            long left = validity.nanosLeft();
            if (lost || (closed && !heldOver) || left <= 0) {
                return null;
            }
            return new HeldLeaseSnapshot(name, kind, backend.id(), grant.token(), Duration.ofNanos(left),
                    audience.threadNames());
        }
    }

    /** The thread entered a section of this lease: a loss interrupts it until it leaves. */
    void bindTo(ThreadLeases.Frames frames) {
        audience.bind(frames);
    }

    /** The thread left its section of this lease, which stays held (a leadership term). */
    void unbind(ThreadLeases.Frames frames) {
        audience.unbind(frames);
    }

    void markAsTerm() {
        term = true;
    }

    /** Runs {@code hook} once, when the lease is declared lost, after its threads were interrupted: at once if it was. */
    void whenLost(Runnable hook) {
        audience.whenLost(hook);
    }

    /**
     * Runs {@code watcher} when the lease is declared lost, right after its threads were interrupted: at once if it
     * was. Any number may watch; for sections that run on no thread of their own, which an interrupt cannot reach.
     *
     * @return what stops the watching when the section ends first (a leadership term outlives many sections)
     */
    Runnable watchLoss(Runnable watcher) {
        return audience.watch(watcher);
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
        LossAudience.Loss loss;
        boolean wasHeldOver;
        synchronized (lock) {
            // Closing the engine ends a hold-over by releasing it (close(false)): nothing was lost, nobody is told.
            if (lost || (closed && !heldOver) || (heldOver && cause == LossCause.SHUTDOWN)) {
                return null;
            }
            lost = true;
            lossReason = reason;
            renewal.cancel();
            loss = audience.take();
            wasHeldOver = heldOver;
        }
        if (wasHeldOver) {
            // No work is left to interrupt: the loss just ends the hold-over, and the grant is released as after any.
            return () -> {
                announce(cause, reason + "; it was held over after its work ended (holdAtLeast), so no work is "
                        + "interrupted, and the name may be granted again before the hold would have ended", loss);
                close(true);
            };
        }
        return () -> announce(cause, reason, loss);
    }

    private void announce(LossCause cause, String reason, LossAudience.Loss loss) {
        String message = "Lease " + nameAndToken() + " on " + backend.id() + " lost (" + cause.tag() + "): " + reason
                + loss.interrupting();
        loss.interruptAndTell(this);
        // A yield, or a shutdown that interrupted no work (an idle leadership term), is expected, not a warning.
        if (cause == LossCause.YIELDED || (cause == LossCause.SHUTDOWN && loss.interruptsNothing() && term)) {
            log.info(message);
        }
        else {
            log.warn(message);
        }
        listener.lost(description, grant.token(), cause);
        if (loss.whenLost() != null) {
            loss.whenLost().run();
        }
        release.freed();
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
        if (!holdOver()) {
            close(true);
        }
    }

    /**
     * Closes the lease for its holder but keeps the grant (renewed, listed, busy for every other request) until its
     * holdAtLeast has passed since the grant, when the engine's timer releases it.
     *
     * @return false when there is nothing to hold over (no hold asked, or passed already, or lost): release now
     */
    private boolean holdOver() {
        long left;
        synchronized (lock) {
            if (closed) {
                return true;
            }
            left = lost ? 0 : hold.nanosLeft(validity.now());
            if (left <= 0) {
                return false;
            }
            closed = true;
            heldOver = true;
        }
        // The section has ended: a loss during the hold-over must not interrupt the thread's next work.
        audience.dismiss();
        if (log.isDebugEnabled()) {
            log.debug("Lease " + nameAndToken() + " on " + backend.id() + " held over for another "
                    + Durations.formatNanos(left) + " (holdAtLeast), then released");
        }
        hold.releaseIn(left, backend.id(), () -> close(true));
        return true;
    }

    /** Releases the grant now if the lease is held over; does nothing otherwise. */
    void endHoldOver() {
        if (heldOver) {
            close(false);
        }
    }

    /**
     * Releases the grant ({@link GrantRelease#release}) now, even one held over; after a loss, in the background when
     * {@code releaseLostInBackground}, so that a store that hangs cannot delay the holder's LeaseLostException.
     */
    void close(boolean releaseLostInBackground) {
        boolean wasLost;
        Runnable closedHook;
        synchronized (lock) {
            if (closed && !heldOver) {
                return;
            }
            wasLost = lost;
            closed = true;
            heldOver = false;
            renewal.cancel();
            closedHook = whenClosed;
        }
        hold.cancel();
        onClose.accept(this);
        if (closedHook != null) {
            closedHook.run();
        }
        release.release(wasLost, releaseLostInBackground, validity.nanosLeft());
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

    /** The end of the grant at the store, and when the name is freed for this engine's other waiters. */
    GrantRelease grantRelease() {
        return release;
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", " + kind + ", " + backend.id()
                + (hasToken() ? ", token " + grant.token().getAsLong() : "") + (isValid() ? ", valid" : ", invalid") + "]";
    }
}
