package dev.lease.etcd;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.NoSuchLeaseException;
import io.grpc.Status;

/**
 * Waits for jetcd's futures no longer than a bound. jetcd retries a call while no member answers, for longer than a
 * lease may wait; the backend must answer by its deadline instead, and say what it was doing when it gave up. An
 * idempotent call is sent again within its bound ({@link #retrying}); a call that is not (a grant's transaction) is
 * sent once ({@link #await}).
 */
final class EtcdCalls {

    /** Between two tries of an idempotent call that failed. */
    private static final long RETRY_PAUSE_MILLIS = 50;

    /** An idempotent call is sent again when a try has no answer after this share of its time. */
    private static final int TRIES = 4;

    /** The shortest wait for a try before the next goes out: a healthy member answers within it even when loaded. */
    private static final long MIN_TRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

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
     * Sends an idempotent call, and sends it again while no answer came ({@link #retrying}).
     *
     * @param send sends the call; each time, jetcd's channel picks the next member it counts as ready
     * @param timeoutNanos how long to wait at most for any answer
     */
    static <T> T idempotent(Supplier<CompletableFuture<T>> send, long timeoutNanos, String what) throws Exception {
        long until = System.nanoTime() + Math.max(1, timeoutNanos);
        return retrying(send.get(), send, until, what);
    }

    /**
     * Waits for an idempotent call, and sends it again, keeping the earlier tries: when a try has no answer after a
     * {@value #TRIES}th of the time (a member paused or cut off still looks ready to the channel, which round-robins
     * calls over the members, so the next try goes to another), and when a try fails (etcd refuses calls for a while
     * under load, "waiting for the applied index took too long", or without a leader). The first answer wins.
     *
     * @param first the call already sent
     * @param again sends it again
     * @param until System.nanoTime() by which to give up
     * @throws Exception the last failure; at once when it will not change by trying again (a lease not found, a
     *         permission refused); when the time is up, the last failure, else a {@link TimeoutException}; when
     *         interrupted, {@link InterruptedException}. Every try still out is cancelled.
     */
    static <T> T retrying(CompletableFuture<T> first, Supplier<CompletableFuture<T>> again, long until, String what)
            throws Exception {
        long started = System.nanoTime();
        long tryNanos = Math.max(MIN_TRY_NANOS, (until - started) / TRIES);
        List<CompletableFuture<T>> out = new ArrayList<>(List.of(first));
        int tries = 1;
        long nextTry = started + tryNanos;
        Exception failure = null;
        try {
            while (true) {
                long now = System.nanoTime();
                if (until - now <= 0) {
                    throw failure != null ? failure : new TimeoutException("etcd did not answer " + what + " within "
                            + TimeUnit.NANOSECONDS.toMillis(until - started) + " ms (" + tries + " tries)");
                }
                if (out.isEmpty() || nextTry - now <= 0) {
                    out.add(again.get());
                    tries++;
                    nextTry = now + tryNanos;
                }
                try {
                    CompletableFuture.anyOf(out.toArray(CompletableFuture[]::new))
                            .get(Math.max(1, Math.min(nextTry - now, until - now)), TimeUnit.NANOSECONDS);
                }
                catch (TimeoutException | ExecutionException | CancellationException ex) {
                    // No answer yet, or a failure: the tries tell which below.
                }
                for (Iterator<CompletableFuture<T>> it = out.iterator(); it.hasNext();) {
                    CompletableFuture<T> call = it.next();
                    if (!call.isDone()) {
                        continue;
                    }
                    Exception failed = failureOf(call);
                    if (failed == null) {
                        return call.join();
                    }
                    it.remove();
                    failed.addSuppressed(new IllegalStateException("while waiting for " + what));
                    if (isFinal(failed)) {
                        throw failed;
                    }
                    failure = failed;
                    // A failure came back fast: the next try goes after a pause, not in a tight loop.
                    long paused = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MILLIS);
                    if (paused - nextTry > 0) {
                        nextTry = paused;
                    }
                }
                if (out.isEmpty() && nextTry - System.nanoTime() > 0) {
                    Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTry - System.nanoTime())));
                }
            }
        }
        finally {
            out.forEach(call -> call.cancel(true));
        }
    }

    private static Exception failureOf(CompletableFuture<?> done) {
        try {
            done.join();
            return null;
        }
        catch (CompletionException ex) {
            return ex.getCause() instanceof Exception cause ? cause : ex;
        }
        catch (CancellationException ex) {
            return ex;
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
