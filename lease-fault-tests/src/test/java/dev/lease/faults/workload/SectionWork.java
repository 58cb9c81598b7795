package dev.lease.faults.workload;

import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;

import dev.lease.faults.mutants.Mutant;

/**
 * The work a worker does while it holds a lease or leads a term, shared by {@link LeaseWorker} and
 * {@link LeaderWorker}: a random hold (a sleep), the {@link LeaseWorker.BeforeWrite} hook, then one write to the fenced
 * {@link Ledger} with the token, every step reported to the {@link EventSink}. The hold is a sleep, so a holder that
 * is paused or cut off while holding wakes up and tries to write with its old token unless the interrupt stops it
 * first: that write is what the fence must refuse. Also the worker's op ids, unique across workers.
 */
final class SectionWork {

    private final int worker;
    private final Ledger ledger;
    private final EventSink sink;
    private final Random random;
    private final int maxHoldMillis;
    private final LeaseWorker.BeforeWrite beforeWrite;
    private final AtomicLong seq = new AtomicLong();

    SectionWork(int worker, Ledger ledger, EventSink sink, LeaseWorker.Config config,
            LeaseWorker.BeforeWrite beforeWrite) {
        this.worker = worker;
        this.ledger = ledger;
        this.sink = sink;
        this.random = new Random(config.seed() * 1_000_003 + worker);
        this.maxHoldMillis = (int) config.maxHold().toMillis();
        this.beforeWrite = beforeWrite;
    }

    /**
     * Holds, then writes with {@code token}; interrupts are reported as interrupts of the section holding
     * {@code token}. An interrupt during the write cannot stop it halfway: it is reported right after it, and the flag
     * stays set for the engine, which turns it into LeaseLostException.
     *
     * @return {@code false} when the section swallowed its interrupt and wrote anyway ({@link Mutant#SWALLOWED_INTERRUPT}):
     *         it must end as it is
     * @throws InterruptedException the engine declared the lease lost during the hold or the hook
     */
    boolean run(String lease, long token) throws InterruptedException {
        try {
            Thread.sleep(random.nextInt(maxHoldMillis + 1));
            beforeWrite.beforeWrite(token);
            boolean interruptedWriting = write(lease, token, beforeWrite.forcesWrite());
            if (interruptedWriting || Thread.currentThread().isInterrupted()) {
                sink.interrupted(token, System.nanoTime());
            }
            return true;
        }
        catch (InterruptedException ex) {
            sink.interrupted(token, System.nanoTime());
            if (Mutant.swallowsInterrupts()) {
                // The mutant section: told that its lease is lost, it writes anyway (not forced: the history must
                // take it for a section that ignored its interrupt).
                write(lease, token, false);
                return false;
            }
            throw ex;
        }
    }

    /** Writes with {@code token}; true when the write failed because the thread was interrupted. */
    private boolean write(String lease, long token, boolean forced) {
        long write = nextId();
        sink.invoke(write, Kind.WRITE, System.nanoTime());
        if (forced) {
            sink.forced(write);
        }
        try {
            boolean accepted = ledger.write(lease, token, write);
            sink.complete(write, Kind.WRITE, accepted ? Outcome.OK : Outcome.FAIL, token, System.nanoTime(),
                    accepted ? null : "stale token refused by the fence");
            return false;
        }
        catch (RuntimeException ex) {
            // The commit may or may not have happened: the checker looks for it in the table either way.
            sink.complete(write, Kind.WRITE, Outcome.UNKNOWN, token, System.nanoTime(), ex.toString());
            return causedByInterrupt(ex);
        }
    }

    /**
     * A driver may turn an interrupt into its own exception and clear the flag. A socket timeout is an
     * {@code InterruptedIOException} too, but no interrupt: taken for one, a write that timed out on a slow resource
     * link would make the checker see the section go on after an interrupt that never came.
     */
    static boolean causedByInterrupt(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.net.SocketTimeoutException) {
                continue;
            }
            if (cause instanceof InterruptedException || cause instanceof java.io.InterruptedIOException
                    || cause instanceof java.nio.channels.ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }

    /** The next op id of this worker: unique across the workers of a run; any thread of the worker may ask. */
    long nextId() {
        return worker * 1_000_000_000L + seq.incrementAndGet();
    }
}
