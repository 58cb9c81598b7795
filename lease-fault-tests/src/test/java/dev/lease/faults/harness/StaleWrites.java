package dev.lease.faults.harness;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import org.awaitility.core.ConditionTimeoutException;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.workload.FrozenWrite;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Worker;

/**
 * Rounds that make a fault scenario produce the stale write a fence exists for, so that the scenario fails against
 * a fence without the comparison ({@link Mutant#FENCE}): a holder frozen between deciding to write and writing
 * while the fault takes its lease away, let go once a successor wrote with a newer token. Random faults rarely land
 * there: the engine usually interrupts the holder before it writes.
 */
public final class StaleWrites {

    private static final Log log = LogFactory.getLog(StaleWrites.class);
    private static final Duration BOUND = seconds(30);
    private static final Duration POLL = Duration.ofMillis(5);
    /** The longest random wait before a paused holder resumes, on top of the order it resumes in. */
    private static final int MAX_RESUME_DELAY_MS = 300;

    /** Where a stale write lands against the successor's first write. */
    enum Order {
        /** After the successor's first write completed: every fence must refuse it. */
        AFTER_THE_SUCCESSORS_WRITE,
        /** After the successor's grant, before its first write: a fence alone accepts it, fence at grant refuses it. */
        BEFORE_THE_SUCCESSORS_WRITE
    }

    /** How many paused-holder rounds landed in each order. */
    public record Tally(int afterTheSuccessorsWrite, int beforeTheSuccessorsWrite) {
    }

    /** Undoes a fault once the successor wrote. */
    @FunctionalInterface
    public interface Undo {

        Undo NOTHING = () -> {
        };

        void run() throws Exception;
    }

    /** A fault struck while the holder stands frozen; returns how to undo it, once a successor wrote. */
    @FunctionalInterface
    public interface Strike {
        Undo strike() throws Exception;
    }

    /** A fault aimed at the worker {@code victim}, frozen before its write. */
    @FunctionalInterface
    public interface StrikeOn {
        Undo strike(int victim) throws Exception;
    }

    private StaleWrites() {
    }

    /**
     * {@code rounds} stale writes of {@code child} (started with {@code pause-before-write}), each frozen right before
     * the write (SIGSTOP) until its lease expired and {@code successor} (the {@link LeaseWorker.BeforeWrite} of
     * {@code rival}) was granted a newer token and stands before its first write; then the child resumes, after a
     * random delay, in a seeded random order against the successor's first write: after it (the write must be
     * refused) or before it (accepted by a fence alone, refused when the holders fence at grant). Both orders occur
     * when {@code rounds >= 2}: the last round takes the order that did not occur yet.
     */
    public static Tally pausedWrites(FaultRun run, ChildHolder child, Worker rival, HeldAfterGrant successor,
            int rounds, Random random, boolean fencedAtGrant) throws Exception {
        int after = 0;
        int before = 0;
        for (int round = 0; round < rounds; round++) {
            boolean last = round == rounds - 1;
            Order order = last && after == 0 ? Order.AFTER_THE_SUCCESSORS_WRITE
                    : last && before == 0 && rounds > 1 ? Order.BEFORE_THE_SUCCESSORS_WRITE
                    : random.nextBoolean() ? Order.AFTER_THE_SUCCESSORS_WRITE : Order.BEFORE_THE_SUCCESSORS_WRITE;
            History.Op write = pausedWrite(run, child, rival, successor, order, random.nextInt(MAX_RESUME_DELAY_MS + 1),
                    round > 0);
            boolean refused = order == Order.AFTER_THE_SUCCESSORS_WRITE || fencedAtGrant;
            assertThat(write.outcome).as("round " + round + ": the frozen write with token " + write.token + " landing "
                    + order + " (" + write.detail + ")")
                    .isEqualTo(refused ? History.Outcome.FAIL : History.Outcome.OK);
            if (order == Order.AFTER_THE_SUCCESSORS_WRITE) {
                after++;
            }
            else {
                before++;
            }
        }
        return new Tally(after, before);
    }

    private static History.Op pausedWrite(FaultRun run, ChildHolder child, Worker rival, HeldAfterGrant successor,
            Order order, int resumeDelayMs, boolean arm) throws Exception {
        long token;
        // The rival stands by until the child holds: a worker that releases and at once acquires again can starve a
        // holder whose backend only polls for a free lease (JDBC).
        rival.standBy(true);
        try {
            if (arm) {
                child.armWrite();
            }
            token = child.nextWriteReady();
            // The child holds the lease, so the rival is not inside a section: it can be armed.
            successor.arm();
        }
        finally {
            rival.standBy(false);
        }
        child.pause();
        long newer = successor.awaitHeld();
        try {
            if (order == Order.AFTER_THE_SUCCESSORS_WRITE) {
                long heldAt = System.nanoTime();
                successor.release();
                await().atMost(BOUND).pollInterval(POLL)
                        .until(() -> run.writeAcceptedSince(heldAt, child.worker(), token));
            }
            Thread.sleep(resumeDelayMs);
            child.resume();
            long resumedAt = System.nanoTime();
            child.go();
            run.fault("SIGSTOP of child holder " + child.worker() + " right before its write with token " + token
                    + " until another worker was granted token " + newer + ", then SIGCONT " + resumeDelayMs
                    + " ms later and the write, " + order, resumedAt);
            History.Op write = await().atMost(BOUND).pollInterval(POLL)
                    .until(() -> run.completedFrozenWrite(child.worker(), token), op -> op != null);
            assertThat(newer).as("the successor's token").isGreaterThan(token);
            return write;
        }
        finally {
            successor.release();
        }
    }

    /**
     * One stale write of {@code child} (started with {@code pause-before-write}) across the scenario's own fault:
     * the child is frozen right before its write (SIGSTOP), {@code strike} injects the fault, and once another worker
     * wrote with a newer token the fault is undone and the child resumes and writes with its old token: the fence
     * must refuse it. {@code rivals} stand by until the child holds.
     */
    public static long pausedAcross(FaultRun run, ChildHolder child, List<? extends Worker> rivals, String what, Strike strike)
            throws Exception {
        long token;
        rivals.forEach(rival -> rival.standBy(true));
        try {
            token = child.nextWriteReady();
        }
        finally {
            rivals.forEach(rival -> rival.standBy(false));
        }
        child.pause();
        long pausedAt = System.nanoTime();
        Undo undo = strike.strike();
        run.fault(what + " while child holder " + child.worker() + " was paused (SIGSTOP) right before its write with"
                + " token " + token + "; SIGCONT and the write once another worker had written", pausedAt);
        await().atMost(BOUND.multipliedBy(2)).pollInterval(POLL)
                .until(() -> run.writeAcceptedSince(pausedAt, child.worker(), token));
        undo.run();
        child.resume();
        child.go();
        assertRefused(run, child.worker(), token);
        return token;
    }

    /**
     * One stale write of an in-process worker across the scenario's own fault: the first worker to reach its write
     * freezes there ({@code gate}), {@code strike} takes its lease away, and once another worker wrote with a newer
     * token the fault is undone and the frozen write goes ahead with its old token: the fence must refuse it.
     */
    public static void frozenAcross(FaultRun run, FrozenWrite gate, String what, StrikeOn strike) throws Exception {
        gate.arm();
        FrozenWrite.Held held = gate.awaitHeld(BOUND);
        long at = System.nanoTime();
        Undo undo = strike.strike(held.worker());
        run.fault(what + " while worker " + held.worker() + " stood right before its write with token " + held.token()
                + "; the write once another worker had written", at);
        try {
            await().atMost(BOUND.multipliedBy(2)).pollInterval(POLL)
                    .until(() -> run.writeAcceptedSince(at, held.worker(), held.token()));
            undo.run();
        }
        finally {
            gate.go();
        }
        assertRefused(run, held.worker(), held.token());
    }

    private static void assertRefused(FaultRun run, int worker, long token) {
        History.Op write = await().atMost(BOUND).pollInterval(POLL)
                .until(() -> run.completedFrozenWrite(worker, token), op -> op != null);
        assertThat(write.outcome).as("the frozen write of worker " + worker + " with token " + token + ", after "
                + "another worker's write with a newer token (" + write.detail + ")").isEqualTo(History.Outcome.FAIL);
    }

    /**
     * Pauses the child while it holds the lease, until another worker got it, then resumes it. The run's in-process
     * workers stand by until the child holds: re-acquiring at once, they could win every race against it.
     */
    public static void pauseUntilTakenOver(FaultRun run, ChildHolder child) throws Exception {
        pauseUntilTakenOver(run, child, run.workers());
    }

    /** Same, with {@code rivals} standing by until the child holds the lease, so that they cannot starve it. */
    public static void pauseUntilTakenOver(FaultRun run, ChildHolder child, List<? extends Worker> rivals) throws Exception {
        long grants = run.grantsOf(child.worker());
        rivals.forEach(rival -> rival.standBy(true));
        try {
            await().atMost(BOUND).pollInterval(POLL)
                    .until(() -> run.grantsOf(child.worker()) > grants && child.holding());
        }
        finally {
            rivals.forEach(rival -> rival.standBy(false));
        }
        child.pause();
        long pausedAt = System.nanoTime();
        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(pausedAt, child.worker()));
        child.resume();
        run.fault("SIGSTOP of child holder " + child.worker() + " until taken over, then SIGCONT", System.nanoTime());
    }

    /**
     * Stops {@code child} (started with {@code pause-inside-transaction}) with SIGSTOP where it stands inside its
     * fenced transaction, holding the fence row's lock, and waits until another worker's write with a newer token was
     * accepted: through the successor's fence at grant and its own write, both of which need that lock. Then resumes
     * the child and lets its write go on, into a session the database has ended, and arms its next write to freeze
     * right before it ({@link #pausedWrites} may follow).
     *
     * @throws AssertionError when no successor wrote within the bound: the stopped holder's transaction kept the lock
     */
    public static void stopInsideItsTransaction(FaultRun run, ChildHolder child) throws Exception {
        long token = child.nextWriteReady();
        child.pause();
        long stoppedAt = System.nanoTime();
        run.fault("SIGSTOP of child holder " + child.worker() + " inside its fenced transaction (token " + token + ")",
                stoppedAt);
        try {
            await().atMost(BOUND).pollInterval(POLL).until(() -> run.writeAcceptedSince(stoppedAt, child.worker(),
                    token));
        }
        catch (ConditionTimeoutException ex) {
            throw new AssertionError("No other worker wrote within " + BOUND.toSeconds() + " s while child holder "
                    + child.worker() + " stood stopped inside its fenced transaction (token " + token + "): that "
                    + "transaction kept the fence row locked, so every successor's fence at grant timed out", ex);
        }
        finally {
            child.resume();
            child.go();
            // The next frozen write freezes before the write, as pausedWrites expects.
            child.armWrite();
        }
    }

    /** Without fence at grant the stale write after the successor's grant was accepted, seen by the new measure only. */
    public static void assertGrantWindowOpen(HistoryChecker.Verdict verdict) {
        assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isPositive();
        assertThat(verdict.staleWritesAccepted()).as("stale writes accepted after a successor's write").isZero();
    }

    /**
     * The stale writes of {@link #pausedWrites} are in the table's numbers: those after the successor's
     * write refused, those between its grant and its write counted, none accepted after a successor's write.
     */
    public static void assertStaleWrites(HistoryChecker.Verdict verdict, StaleWrites.Tally tally) {
        assertFenceRefused(verdict);
        assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant")
                .isGreaterThanOrEqualTo(tally.beforeTheSuccessorsWrite());
        assertThat(verdict.writesRejected()).as("stale writes refused")
                .isGreaterThanOrEqualTo(tally.afterTheSuccessorsWrite());
    }

    /** The run saw the fence refuse at least one stale write and accept none. */
    public static void assertFenceRefused(HistoryChecker.Verdict verdict) {
        assertThat(verdict.writesRejected()).as("stale writes refused").isGreaterThanOrEqualTo(1);
        assertThat(verdict.staleWritesAccepted()).as("stale writes accepted").isZero();
    }
}
