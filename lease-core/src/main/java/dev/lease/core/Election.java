package dev.lease.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeasedWork;
import dev.lease.leader.Leadership;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;

/**
 * One election as this instance takes part in it ({@link LeaseEngine#election}): a thread of its own campaigns
 * for the election's lease, waiting on the backend, and holds it as a term while the instance leads. A term ends
 * when its lease is lost (renewal failed, store reported it, local deadline passed), when leadership is yielded, or
 * when the election is closed; work running in it is interrupted first, the lease is released so that another
 * instance can take over at once, and the campaign starts again after a pause (not after closing).
 *
 * <p>The engine's side of {@link Leadership}, so it lives with the engine rather than in {@code dev.lease.leader}: its
 * terms are the engine's held leases and its attempts go along the engine's corridor ({@link CampaignAttempts}), none
 * of it public, while lease-spring's elections and reactive support, in other packages, use it; the leader package
 * keeps only what applications compile against.
 */
public final class Election implements Leadership, Campaigns, AutoCloseable {

    private static final Log log = LogFactory.getLog(Election.class);

    /** The least pause after a term ends, so that a store in trouble is not hammered by a loop of terms. */
    private static final Duration MIN_PAUSE = Duration.ofMillis(200);

    /** How long closing waits for the campaign thread to release the term. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /** Told when a term starts and ends, on the election's thread; what it throws is logged and ignored. */
    public interface Listener {

        /**
         * A term started; {@link dev.lease.leader.LeaderOnly} work may run in it once this returns.
         *
         * @param event the election and the term's token
         */
        void granted(LeadershipGrantedEvent event);

        /**
         * A term ended; work that ran in it was interrupted.
         *
         * @param event the election and why
         */
        void revoked(LeadershipRevokedEvent event);
    }

    private final LeaseSpec spec;
    private final CampaignAttempts attempts;
    private final Listener listener;
    private final Thread campaign;
    private final Object lock = new Object();
    /** The term while this instance leads; set only after the granted event went out. */
    private volatile HeldLease term;
    private String endReason;
    private LossCause endCause;
    private volatile boolean closing;
    /**
     * Whether the campaign thread is waiting for a grant or pausing, the only times closing interrupts it: an interrupt
     * at any other time would land in a release (cut off mid-call, leaving the lease in the store for a ttl) or in the
     * application's listeners. Guarded by {@link #lock}.
     */
    private boolean campaigning;
    private volatile boolean started;
    /** Pause before campaigning again after a yield: long enough for another instance to take over. */
    private final Duration yieldPause;

    Election(LeaseSpec spec, Listener listener, CampaignAttempts attempts) {
        this.spec = spec;
        this.attempts = attempts;
        this.listener = listener;
        this.yieldPause = spec.ttl().orElse(Duration.ofSeconds(5));
        this.campaign = new Thread(this::campaign, "lease-election-" + spec.name());
        this.campaign.setDaemon(true);
    }

    /**
     * Starts campaigning; a second call does nothing.
     *
     * @throws IllegalStateException when the election was closed: a closed election never campaigns again, so
     *         starting it would leave a caller believing it campaigns (ask the engine for a new one instead)
     */
    public void start() {
        synchronized (lock) {
            if (closing) {
                throw new IllegalStateException("Election '" + spec.name() + "' was closed and cannot campaign "
                        + "again; create a new one with LeaseEngine.election(...)");
            }
            if (started) {
                return;
            }
            started = true;
        }
        campaign.start();
    }

    @Override
    public String election() {
        return spec.name();
    }

    @Override
    public LeaseKind kind() {
        return spec.kind();
    }

    @Override
    public boolean isLeader() {
        HeldLease current = term;
        return current != null && current.isValid();
    }

    @Override
    public Optional<FencingToken> token() {
        HeldLease current = term;
        return current != null && current.isValid() && current.hasToken() ? Optional.of(current.token())
                : Optional.empty();
    }

    @Override
    public void yieldLeadership() {
        end(LossCause.YIELDED, "leadership of '" + spec.name() + "' was yielded");
    }

    /**
     * Runs {@code work} in the current term, bound to the calling thread and interrupted if the term ends, or returns
     * {@code otherwise} when this instance does not lead.
     *
     * @param work the leader-only work
     * @param otherwise what to return when not leader
     * @param <T> the result type
     * @return the work's result, or {@code otherwise}'s
     * @throws dev.lease.LeaseLostException when the term ended while the work ran
     * @throws Throwable what the work threw
     */
    public <T> T runAsLeader(LeasedWork<T> work, Supplier<T> otherwise) throws Throwable {
        HeldLease current = term;
        if (current == null || !current.isValid()) {
            return otherwise.get();
        }
        return BoundSections.inTerm(current, work);
    }

    /** The term while this instance leads, else null: for sections that run in it without a thread of their own. */
    HeldLease currentTerm() {
        return term;
    }

    /**
     * Ends the campaign: the current term, if any, ends (its work interrupted, its lease released at once, the
     * revoked event published) before this returns, or after {@code 10s} at most.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        end(LossCause.SHUTDOWN, "the application is shutting down");
        synchronized (lock) {
            if (campaigning) {
                // Waiting for a grant or pausing: wake it up so that it sees it is closing.
                campaign.interrupt();
            }
        }
        if (started && Thread.currentThread() != campaign) {
            try {
                campaign.join(CLOSE_WAIT.toMillis());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void end(LossCause cause, String reason) {
        HeldLease current;
        synchronized (lock) {
            current = term;
            if (current == null || current.isMarkedLost()) {
                return;
            }
            endReason = reason;
            endCause = cause;
        }
        current.markLost(cause, reason);
    }

    private void campaign() {
        try {
            campaignUntilClosed();
        }
        finally {
            attempts.stop();
        }
    }

    private void campaignUntilClosed() {
        Backoff backoff = new Backoff();
        while (!closing && !attempts.engineClosed()) {
            Optional<HeldLease> granted;
            if (!campaigning(true)) {
                break;
            }
            try {
                granted = attempts.attempt();
            }
            catch (RuntimeException ex) {
                if (closing) {
                    break;
                }
                log.debug("Election '" + spec.name() + "': campaign attempt failed, retrying: " + ex);
                if (!pause(Duration.ofNanos(backoff.nextNanos()))) {
                    break;
                }
                continue;
            }
            finally {
                campaigning(false);
            }
            if (granted.isEmpty()) {
                continue;
            }
            backoff = new Backoff();
            LossCause ended;
            try {
                ended = lead(granted.get());
            }
            catch (Throwable ex) {
                // The term was released on the way out; an election that stops campaigning would leave it leaderless.
                log.error("Election '" + spec.name() + "': a term ended abnormally; campaigning again", ex);
                ended = null;
            }
            if (!closing && !pause(ended == LossCause.YIELDED ? yieldPause : MIN_PAUSE)) {
                break;
            }
        }
    }

    /** Marks the campaign thread as waiting (interruptible by closing) or not; false when closing already began. */
    private boolean campaigning(boolean waiting) {
        synchronized (lock) {
            if (waiting && closing) {
                return false;
            }
            campaigning = waiting;
            return true;
        }
    }

    /** Holds the term until it ends, then releases it; returns how it ended when this instance ended it, else null. */
    private LossCause lead(HeldLease granted) {
        CountDownLatch ended = new CountDownLatch(1);
        granted.whenLost(ended::countDown);
        granted.markAsTerm();
        if (closing || granted.isMarkedLost()) {
            // Closing, or lost on the way back from the store: never a term, so no granted or revoked event.
            granted.close(false);
            return null;
        }
        Optional<FencingToken> token = granted.hasToken() ? Optional.of(granted.token()) : Optional.empty();
        boolean told = false;
        LossCause cause;
        try {
            tell(() -> listener.granted(new LeadershipGrantedEvent(spec.name(), token)));
            told = true;
            synchronized (lock) {
                endReason = null;
                endCause = null;
                term = granted;
            }
            if (closing) {
                // close() ran before the term was visible to it.
                end(LossCause.SHUTDOWN, "the application is shutting down");
            }
            log.info("This instance leads election '" + spec.name() + "'"
                    + token.map(t -> " (term token " + t.value() + ")").orElse("") + " on "
                    + granted.description().backend());
            awaitEnd(ended, granted);
        }
        finally {
            String reason;
            synchronized (lock) {
                term = null;
                reason = endReason != null ? endReason : granted.lossReason();
                cause = endCause;
            }
            // Released now, not in the background: another instance takes over at once instead of after a ttl.
            granted.close(false);
            if (told) {
                String why = reason != null ? reason : "the term ended";
                tell(() -> listener.revoked(new LeadershipRevokedEvent(spec.name(), why)));
                log.info("This instance no longer leads election '" + spec.name() + "': " + why);
            }
        }
        return cause;
    }

    /** Waits for the term to end; an interrupt without closing (nobody else interrupts this thread) changes nothing. */
    private static void awaitEnd(CountDownLatch ended, HeldLease granted) {
        while (true) {
            try {
                ended.await();
                return;
            }
            catch (InterruptedException ex) {
                if (granted.isMarkedLost()) {
                    return;
                }
            }
        }
    }

    /** A listener that fails, even with an Error such as a failed assertion, must not end the campaign. */
    private void tell(Runnable event) {
        try {
            event.run();
        }
        catch (VirtualMachineError ex) {
            throw ex;
        }
        catch (Throwable ex) {
            log.warn("A listener of election '" + spec.name() + "' failed; ignored", ex);
        }
    }

    /** Sleeps; false when closing interrupted it. */
    private boolean pause(Duration pause) {
        if (!campaigning(true)) {
            return false;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(pause.toNanos());
            return !closing;
        }
        catch (InterruptedException ex) {
            return false;
        }
        finally {
            campaigning(false);
        }
    }

    @Override
    public String toString() {
        HeldLease current = term;
        return "Election[" + spec.name() + ", " + spec.kind() + ", "
                + (current != null && current.isValid() ? "leader" + (current.hasToken() ? " (token "
                        + current.token().value() + ")" : "") : "follower") + ", ttl "
                + spec.ttl().map(Durations::format).orElse("default") + "]";
    }

    /**
     * This election itself: a {@link Campaigns} whose campaign never changes.
     *
     * @return this
     */
    @Override
    public Election running() {
        return this;
    }
}
