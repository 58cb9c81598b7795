package dev.lease.faults.workload;

import java.time.Duration;

import dev.lease.faults.checker.History;

/**
 * Freezes the write of the first in-process worker that reaches it once armed, the way a fault freezes a holder
 * that struck between deciding to write and writing: deaf to interrupts (its engine may declare the lease lost
 * meanwhile, and the interrupts are reported as the child's {@link HolderMain.PausedWrite} reports them), it
 * writes with its old token when let go. The other workers pass straight through, so one of them can take over and
 * write first. Shared by the workers of a run: {@link #of(int)} is each one's {@link LeaseWorker.BeforeWrite}.
 */
public final class FrozenWrite {

    /** The worker standing before its frozen write, and the token that write will carry. */
    public record Held(int worker, long token) {
    }

    private final History history;
    private final Object lock = new Object();
    private boolean armed;
    private boolean released;
    private Held held;
    private boolean interrupted;

    public FrozenWrite(History history) {
        this.history = history;
    }

    public LeaseWorker.BeforeWrite of(int worker) {
        return new LeaseWorker.BeforeWrite() {
            private boolean forcing;

            @Override
            public void beforeWrite(long token) {
                forcing = freeze(worker, token);
            }

            /** The frozen write goes ahead after the interrupts it swallowed: the fence must refuse it. */
            @Override
            public boolean forcesWrite() {
                return forcing;
            }
        };
    }

    /** Freezes the next write any worker makes. */
    public void arm() {
        synchronized (lock) {
            armed = true;
            released = false;
            held = null;
            interrupted = false;
        }
    }

    /** Waits until a worker stands before its frozen write. */
    public Held awaitHeld(Duration bound) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        synchronized (lock) {
            while (held == null) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("no worker got to its write within " + bound);
                }
                lock.wait(Math.max(1, left / 1_000_000));
            }
            return held;
        }
    }

    /** Whether the frozen worker's engine interrupted it: it declared the lease lost. */
    public boolean interrupted() {
        synchronized (lock) {
            return interrupted;
        }
    }

    /** Lets the frozen write go ahead, with its old token. */
    public void go() {
        synchronized (lock) {
            released = true;
            lock.notifyAll();
        }
    }

    /** @return whether this write was frozen */
    private boolean freeze(int worker, long token) {
        synchronized (lock) {
            if (!armed) {
                return false;
            }
            armed = false;
            held = new Held(worker, token);
            lock.notifyAll();
            while (!released) {
                try {
                    lock.wait();
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                    history.interrupted(worker, token, System.nanoTime());
                }
            }
            if (Thread.interrupted()) {
                interrupted = true;
                history.interrupted(worker, token, System.nanoTime());
            }
            return true;
        }
    }
}
