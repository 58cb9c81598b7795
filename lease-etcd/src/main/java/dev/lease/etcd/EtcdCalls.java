package dev.lease.etcd;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.NoSuchLeaseException;
import io.grpc.Status;

/**
 * Waits for jetcd's futures no longer than a bound. jetcd retries a call while no member answers, for longer than a
 * lease may wait; the backend must answer by its deadline instead, and say what it was doing when it gave up.
 */
final class EtcdCalls {

    /** Between two tries of an idempotent call that failed. */
    private static final long RETRY_PAUSE_MILLIS = 50;

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

    /**
     * Waits for an idempotent call, and sends it again while it fails and {@code until} has not passed: etcd refuses
     * calls for a while under load ("waiting for the applied index took too long") or without a leader.
     *
     * @param first the call already sent
     * @param again sends it again
     * @param until System.nanoTime() by which to give up
     * @throws Exception the last failure; at once when it will not change by trying again (a lease not found, a
     *         permission refused), when the time is up, or when interrupted
     */
    static <T> T retrying(CompletableFuture<T> first, Supplier<CompletableFuture<T>> again, long until, String what)
            throws Exception {
        CompletableFuture<T> call = first;
        while (true) {
            try {
                return await(call, until - System.nanoTime(), what);
            }
            catch (TimeoutException | InterruptedException ex) {
                throw ex;
            }
            catch (Exception ex) {
                if (isFinal(ex) || until - System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MILLIS) <= 0) {
                    throw ex;
                }
                Thread.sleep(RETRY_PAUSE_MILLIS);
                call = again.get();
            }
        }
    }

    /**
     * Whether etcd answered that the lease is not there (expired or revoked), in any of jetcd's ways of saying it: an
     * {@link EtcdException} (a keep-alive answered with ttl 0), or the raw gRPC status (a put on the lease).
     */
    static boolean leaseGone(Throwable failure) {
        return failure instanceof NoSuchLeaseException || "NOT_FOUND".equals(code(failure));
    }

    private static boolean isFinal(Throwable failure) {
        return leaseGone(failure) || Set.of("PERMISSION_DENIED", "UNAUTHENTICATED", "INVALID_ARGUMENT")
                .contains(code(failure));
    }

    /** The gRPC status code's name: jetcd's error codes are named after them. */
    private static String code(Throwable failure) {
        return failure instanceof EtcdException etcd ? etcd.getErrorCode().name()
                : Status.fromThrowable(failure).getCode().name();
    }
}
