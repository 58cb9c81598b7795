package dev.lease.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.lease.Lease;
import dev.lease.LeaseCallback;

/**
 * Leased work that blocks until it is interrupted, the way a holder's work must stop when its lease is lost. It
 * records that it started and whether the interrupt reached it; the {@link InterruptedException} propagates, so
 * the caller's {@code LeaseLostException} carries it as its cause.
 */
public final class BlockingWork implements LeaseCallback<String> {

    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicBoolean interrupted = new AtomicBoolean();

    @Override
    public String doInLease(Lease lease) throws InterruptedException {
        started.countDown();
        try {
            Thread.sleep(TestTiming.seconds(120).toMillis());
        }
        catch (InterruptedException ex) {
            interrupted.set(true);
            throw ex;
        }
        return "finished without noticing";
    }

    /** Whether the work started (holds the lease) within {@code bound}. */
    public boolean awaitStarted(Duration bound) throws InterruptedException {
        return started.await(bound.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Whether the interrupt reached the work. */
    public boolean wasInterrupted() {
        return interrupted.get();
    }
}
