package dev.lease.faults.workload;

import java.util.HashSet;
import java.util.Set;

import dev.lease.FencingToken;
import dev.lease.LeaseLostException;
import dev.lease.core.Election;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.testing.TestTiming;

/**
 * One instance of a leadership workload, in this JVM or in a child ({@link HolderMain} {@code mode=leader}): it
 * campaigns for an election through the real engine ({@link LeaseEngine#election}, {@link Election}) and, while it
 * leads, runs {@link SectionWork} again and again through {@link Election#runAsLeader}: a hold, then a write to the
 * fenced ledger with the term's token. So a term is a leased section with many writes, renewed and interrupted on
 * loss by the engine like any lease.
 *
 * <p>What goes into the history, in the ops the checker already knows (an election name is a lease name):
 * <ul>
 *   <li>a <em>term</em> is an ACQUIRE: invoked when the campaign (re)starts (before {@link Election#start()}, or when
 *       the previous term's revoked event came: the election campaigns again only after it), completed OK with the
 *       term's token when the granted event comes. Between the two lies the store's grant, which is what the
 *       real-time order of grants needs. A campaign closed without a term ends FAIL;</li>
 *   <li>the term's end is a RELEASE: OK when this worker gave the term up ({@link #standBy}, {@link #stop}), invoked
 *       just before it checked that the term was still valid, so the store still held it then; FAIL, invoked and
 *       completed when the revoked event came, when the term was lost (the holder was told);</li>
 *   <li>every write of the term is a WRITE with the token, its interrupts are interrupts of the term.</li>
 * </ul>
 * Events out of order (a grant while a term is open, a revoke without a term, leader work under a token no granted
 * event announced) are {@linkplain EventSink#problem problems} of the run.
 *
 * <p>Standing by closes the election (the term, if any, is given up at once, its work interrupted) and waits until the
 * work thread left the term; standing up again opens a new election on the same engine.
 */
public final class LeaderWorker implements Worker {

    private final int worker;
    private final LeaseEngine engine;
    private final LeaseWorker.Config config;
    private final EventSink sink;
    private final SectionWork work;
    private final Object lock = new Object();
    /** The election campaigning now; null while standing by or stopped. Guarded by {@link #lock}, as what follows. */
    private Campaign campaign;
    /** The term announced by a granted event and not revoked yet. */
    private Term term;
    private final Set<Long> announced = new HashSet<>();
    private boolean stopped;
    private boolean standingBy;
    /** The work thread is between taking a term and leaving its leader work. */
    private boolean working;
    /** Elections being closed: {@link #run()} does not return before their last events are recorded. */
    private int closings;
    private volatile boolean holding;

    public LeaderWorker(int worker, LeaseEngine engine, Ledger ledger, LeaseWorker.Config config, EventSink sink,
            LeaseWorker.BeforeWrite beforeWrite) {
        this.worker = worker;
        this.engine = engine;
        this.config = config;
        this.sink = sink;
        this.work = new SectionWork(worker, ledger, sink, config, beforeWrite);
    }

    /** One term as the history knows it. */
    private static final class Term {

        final long token;
        final Campaign campaign;
        /** The RELEASE this worker invoked to give the term up, 0 when it did not. */
        long release;
        boolean revoked;

        Term(long token, Campaign campaign) {
            this.token = token;
            this.campaign = campaign;
        }
    }

    /** One election, from its start to its close, and the listener of its events. */
    private final class Campaign implements Election.Listener {

        Election election;
        /** The ACQUIRE of the term it campaigns for, 0 when none is open. */
        long acquire;
        boolean closing;
        boolean closed;

        @Override
        public void granted(LeadershipGrantedEvent event) {
            long at = System.nanoTime();
            long token = event.token().map(FencingToken::value).orElse(0L);
            synchronized (lock) {
                if (closed) {
                    sink.problem("granted term with token " + token + " after its election was closed");
                    return;
                }
                if (term != null) {
                    sink.problem("granted term with token " + token + " while its term with token " + term.token
                            + " had not been revoked");
                }
                if (acquire == 0) {
                    sink.problem("granted term with token " + token + " while no campaign was open");
                    acquire = work.nextId();
                    sink.invoke(acquire, Kind.ACQUIRE, at);
                }
                sink.complete(acquire, Kind.ACQUIRE, Outcome.OK, token, at, null);
                acquire = 0;
                term = new Term(token, this);
                announced.add(token);
                lock.notifyAll();
            }
        }

        @Override
        public void revoked(LeadershipRevokedEvent event) {
            long at = System.nanoTime();
            synchronized (lock) {
                Term ended = term;
                if (ended == null || ended.campaign != this) {
                    sink.problem("revoked with no term open: " + event.reason());
                }
                else {
                    if (ended.release != 0) {
                        sink.complete(ended.release, Kind.RELEASE, Outcome.OK, ended.token, at, event.reason());
                    }
                    else {
                        long release = work.nextId();
                        sink.invoke(release, Kind.RELEASE, at);
                        sink.complete(release, Kind.RELEASE, Outcome.FAIL, ended.token, at,
                                "term lost: " + event.reason());
                    }
                    ended.revoked = true;
                    term = null;
                    lock.notifyAll();
                }
                if (!closing && !closed) {
                    // The election campaigns again after this returns (and a pause).
                    acquire = work.nextId();
                    sink.invoke(acquire, Kind.ACQUIRE, at);
                }
            }
        }
    }

    @Override
    public void run() {
        synchronized (lock) {
            if (!stopped && !standingBy && campaign == null) {
                open();
            }
        }
        while (true) {
            Term current = awaitTerm();
            if (current == null) {
                awaitClosed();
                return;
            }
            try {
                lead(current);
            }
            finally {
                synchronized (lock) {
                    working = false;
                    lock.notifyAll();
                }
            }
        }
    }

    /** Waits for a term to work in; null once stopped. Marks the work thread {@link #working}. */
    private Term awaitTerm() {
        synchronized (lock) {
            while (!stopped && (term == null || term.revoked)) {
                try {
                    lock.wait();
                }
                catch (InterruptedException ex) {
                    // A loss interrupt that came after the term's work ended: not a reason to stop.
                }
            }
            if (stopped) {
                return null;
            }
            working = true;
            return term;
        }
    }

    /** Runs the term's work once; returns when it ended, or at once when the term is not (or no longer) visible. */
    private void lead(Term current) {
        Thread.interrupted(); // a loss interrupt of an earlier term is not for this one
        Boolean ran;
        try {
            ran = current.campaign.election.runAsLeader(lease -> {
                long token = lease.hasToken() ? lease.token().value() : 0;
                synchronized (lock) {
                    if (!announced.contains(token)) {
                        sink.problem("leader work ran with token " + token + ", which no granted event announced");
                        return Boolean.FALSE;
                    }
                }
                holding = true;
                try {
                    return work.run(lease.name(), token);
                }
                finally {
                    holding = false;
                }
            }, () -> null);
        }
        catch (LeaseLostException ex) {
            return; // the term ended while its work ran; its revoked event follows
        }
        catch (InterruptedException ex) {
            return; // interrupted without a loss: stopAll giving up on a worker that would not stop
        }
        catch (Throwable ex) {
            sink.problem("leader work failed: " + ex);
            return;
        }
        if (ran == null) {
            // Announced but not visible yet (the granted event comes first), or over but not revoked yet.
            synchronized (lock) {
                if (term == current && !stopped) {
                    try {
                        lock.wait(5);
                    }
                    catch (InterruptedException ex) {
                        // Same as above.
                    }
                }
            }
        }
    }

    /** Opens a new election and starts it; under {@link #lock}. */
    private void open() {
        Campaign opened = new Campaign();
        opened.election = engine.election(config.spec(), opened);
        opened.acquire = work.nextId();
        sink.invoke(opened.acquire, Kind.ACQUIRE, System.nanoTime());
        campaign = opened;
        opened.election.start();
    }

    /**
     * Takes the current election out of use, to be closed by {@link #close}; under {@link #lock}. A term it holds is
     * given up: its RELEASE is invoked now, if the term is still valid after now (then the store still held it now,
     * and no successor can have been granted before).
     */
    private Campaign detach() {
        Campaign closing = campaign;
        if (closing == null) {
            return null;
        }
        campaign = null;
        closing.closing = true;
        closings++;
        Term current = term;
        if (current != null && current.campaign == closing && !current.revoked && current.release == 0) {
            long at = System.nanoTime();
            if (closing.election.isLeader()) {
                current.release = work.nextId();
                sink.invoke(current.release, Kind.RELEASE, at);
            }
        }
        return closing;
    }

    /**
     * Closes an election {@link #detach() detached}: its term, if any, ends at once (released, revoked) before this
     * returns.
     */
    private void close(Campaign closing, String why) {
        if (closing == null) {
            return;
        }
        try {
            closing.election.close();
        }
        finally {
            synchronized (lock) {
                closing.closed = true;
                if (closing.acquire != 0) {
                    sink.complete(closing.acquire, Kind.ACQUIRE, Outcome.FAIL, -1, System.nanoTime(),
                            "the campaign ended without a term: " + why);
                    closing.acquire = 0;
                }
                if (term != null && term.campaign == closing) {
                    sink.problem("the election was closed (" + why + ") but its term with token " + term.token
                            + " was never revoked");
                    term.revoked = true;
                    term = null;
                }
                closings--;
                lock.notifyAll();
            }
        }
    }

    /** Gives up the current term at once and campaigns no more; {@link #run()} returns once its work is over. */
    @Override
    public void stop() {
        Campaign closing;
        synchronized (lock) {
            if (stopped) {
                return;
            }
            stopped = true;
            closing = detach();
            lock.notifyAll();
        }
        close(closing, "stopped");
    }

    /** Waits until the elections being closed recorded their last events (a child prints them before its BYE). */
    private void awaitClosed() {
        long end = System.nanoTime() + TestTiming.seconds(30).toNanos();
        synchronized (lock) {
            while (closings > 0 && end - System.nanoTime() > 0) {
                try {
                    lock.wait(Math.max(1, (end - System.nanoTime()) / 1_000_000));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * On: gives up the current term at once (released, so that another instance takes over without waiting for a ttl)
     * and campaigns no more, and returns once the work thread left the term. Off: campaigns again.
     */
    @Override
    public void standBy(boolean on) {
        if (!on) {
            synchronized (lock) {
                if (standingBy && !stopped) {
                    standingBy = false;
                    open();
                }
            }
            return;
        }
        Campaign closing;
        synchronized (lock) {
            if (standingBy || stopped) {
                return;
            }
            standingBy = true;
            closing = detach();
        }
        close(closing, "stood by");
        long end = System.nanoTime() + TestTiming.seconds(30).toNanos();
        synchronized (lock) {
            while (working) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("leader worker " + worker + " was still in its term's work "
                            + TestTiming.seconds(30) + " after its election was closed");
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while standing by", ex);
                }
            }
        }
    }

    @Override
    public boolean holding() {
        return holding;
    }
}
