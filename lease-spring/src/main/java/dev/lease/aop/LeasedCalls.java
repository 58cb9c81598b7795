package dev.lease.aop;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The {@code @Leased} calls in progress, so that shutdown can let them end before the engine closes and refuse
 * calls that would start after that. A call nested in one in progress on the same thread is still admitted: it is
 * part of the work being waited for.
 */
final class LeasedCalls {

    private final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
    private int running;
    private boolean closed;

    /** @return false, and counts nothing, when the calls are closed and this thread is not inside one */
    synchronized boolean enter() {
        int[] nesting = depth.get();
        if (closed && nesting[0] == 0) {
            depth.remove();
            return false;
        }
        nesting[0]++;
        running++;
        return true;
    }

    /** Ends a call that {@link #enter()} admitted. */
    synchronized void exit() {
        int[] nesting = depth.get();
        if (--nesting[0] == 0) {
            depth.remove();
        }
        if (--running == 0) {
            notifyAll();
        }
    }

    /**
     * Admits no new call, then waits for those in progress to end.
     *
     * @return whether they all ended within {@code bound}
     */
    synchronized boolean closeAndAwait(Duration bound) throws InterruptedException {
        if (closed) {
            // A second template (an application's wrapper and the engine it wraps): the first one waited already.
            return true;
        }
        closed = true;
        long deadline = System.nanoTime() + bound.toNanos();
        for (long left = bound.toNanos(); running > 0 && left > 0; left = deadline - System.nanoTime()) {
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return running == 0;
    }

    synchronized int running() {
        return running;
    }
}
