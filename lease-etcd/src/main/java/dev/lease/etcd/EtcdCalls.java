package dev.lease.etcd;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for jetcd's futures no longer than a bound. jetcd retries a call while no member answers, for longer than a
 * lease may wait; the backend must answer by its deadline instead, and say what it was doing when it gave up.
 */
final class EtcdCalls {

    private EtcdCalls() {
    }

    /**
     * @param call the pending call
     * @param timeoutNanos how long to wait at most
     * @param what the call in a few words, for the exception message ("the grant of lease 'a'")
     * @return the call's answer
     * @throws TimeoutException when etcd did not answer in time (the call is cancelled)
     * @throws InterruptedException when the waiting thread is interrupted (the call is cancelled)
     * @throws Exception the call's own failure, unwrapped
     */
    static <T> T await(CompletableFuture<T> call, long timeoutNanos, String what) throws Exception {
        try {
            return call.get(Math.max(1, timeoutNanos), TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            call.cancel(true);
            throw new TimeoutException("etcd did not answer " + what + " within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
        }
        catch (InterruptedException ex) {
            call.cancel(true);
            throw ex;
        }
        catch (ExecutionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof Exception failure) {
                failure.addSuppressed(new IllegalStateException("while waiting for " + what));
                throw failure;
            }
            throw ex;
        }
    }
}
