package dev.lease.faults.workload;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Holds a worker's first write, after its grant, until released: the successor of a paused holder waits there so
 * that the holder's stale write lands after the successor's grant and before its first write. Interruptible: a
 * successor that loses its lease meanwhile stops waiting.
 */
public final class HeldAfterGrant implements LeaseWorker.BeforeWrite {

    private static final Duration BOUND = seconds(30);

    private volatile CountDownLatch held = new CountDownLatch(1);
    private volatile CountDownLatch released = new CountDownLatch(1);
    private final AtomicBoolean armed;
    private volatile long token = -1;

    /** Holds the worker's first write. */
    public HeldAfterGrant() {
        this(true);
    }

    private HeldAfterGrant(boolean armed) {
        this.armed = new AtomicBoolean(armed);
    }

    /** Holds nothing until {@link #arm()}. */
    public static HeldAfterGrant disarmed() {
        return new HeldAfterGrant(false);
    }

    @Override
    public void beforeWrite(long token) throws InterruptedException {
        if (!armed.compareAndSet(true, false)) {
            return;
        }
        this.token = token;
        held.countDown();
        released.await();
    }

    /** Waits until the worker holds a grant and waits before its first write; returns the grant's token. */
    public long awaitHeld() throws InterruptedException {
        if (!held.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the successor was not granted the lease within " + BOUND);
        }
        return token;
    }

    public void release() {
        released.countDown();
    }

    /** Holds the worker's next write the same way; only while the worker does not wait here. */
    public void arm() {
        held = new CountDownLatch(1);
        released = new CountDownLatch(1);
        armed.set(true);
    }
}
