package dev.lease.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * The calls a caller waiting for a lease makes to the backend, a grant request and the wait for a release before it,
 * given up at the caller's deadline. A backend that does not bound its own calls is asked on a helper thread, never
 * interrupted: the caller stops waiting at the deadline and the request is settled when the call returns (a late
 * grant released, a late failure abandoned), so that nothing it did blocks the name.
 */
final class BackendCalls {

    private static final Log log = LogFactory.getLog(BackendCalls.class);

    private final RenewalExecutors executors;

    BackendCalls(RenewalExecutors executors) {
        this.executors = executors;
    }

    /**
     * One grant request, settled whatever happens: a request that failed may have reached the store, so it is
     * abandoned (in the background); one that outlived the caller's wait is settled when its call returns.
     *
     * <p>A waiting caller first waits for the store to signal a release, for up to {@code awaitNanos}, in the same
     * call: a backend called on a helper thread then goes from the release straight to the grant request, without
     * handing the wake-up back to the caller and the request over again (two thread switches on the path every
     * handover takes). Nothing is sent once the caller stopped waiting.
     *
     * @param awaitNanos how long to wait for a release before the request, 0 for none
     * @param sending run right before the request is sent, on whichever thread sends it
     * @throws Exception what the backend threw, or why the caller stopped waiting
     */
    Optional<? extends BackendGrant<?>> grant(LeaseRequest lease, GrantRequest request, long awaitNanos,
            Runnable sending) throws Exception {
        LeaseBackend<?> backend = lease.backend();
        boolean direct = boundsItsCalls(backend);
        if (direct && awaitNanos > 0) {
            backend.awaitRelease(lease.name(), Duration.ofNanos(awaitNanos));
        }
        try {
            return direct ? directCall(backend, request, sending) : call(backend, request, lease, awaitNanos, sending);
        }
        catch (IllegalArgumentException refusedName) {
            throw refusedName;
        }
        catch (Outlived ex) {
            throw ex.toCaller();
        }
        catch (Exception ex) {
            abandon(backend, request);
            throw ex;
        }
    }

    /** Whether the backend gives up its own calls at the request's deadline, so none needs a helper thread. */
    private static boolean boundsItsCalls(LeaseBackend<?> backend) {
        return backend.traits().boundsCallsByDeadline();
    }

    private static <G extends Grant> Optional<BackendGrant<G>> directCall(LeaseBackend<G> backend,
            GrantRequest request, Runnable sending) throws Exception {
        sending.run();
        return backend.tryAcquire(request).map(grant -> new BackendGrant<>(backend, grant));
    }

    /**
     * Asks the backend on a helper thread, after its wait for a release, giving up at the request's deadline. The
     * caller never waits for the wait alone: a wait that hangs on a dead connection uses up the caller's time as a
     * request would, and nothing is sent after the caller gave up.
     */
    private <G extends Grant> Optional<BackendGrant<G>> call(LeaseBackend<G> backend, GrantRequest request,
            LeaseRequest lease, long awaitNanos, Runnable sending) throws Exception {
        long sentAt = System.nanoTime();
        CompletableFuture<Optional<G>> call = new CompletableFuture<>();
        AtomicBoolean gaveUp = new AtomicBoolean();
        try {
            executors.calls().execute(() -> {
                if (awaitNanos > 0) {
                    try {
                        backend.awaitRelease(lease.name(), Duration.ofNanos(awaitNanos));
                    }
                    catch (Throwable ignored) {
                        // Spurious returns are fine: the grant request tells how the store is.
                    }
                }
                if (gaveUp.get()) {
                    call.complete(Optional.empty());
                    return;
                }
                try {
                    sending.run();
                    call.complete(backend.tryAcquire(request));
                }
                catch (Throwable ex) {
                    call.completeExceptionally(ex);
                }
            });
        }
        catch (RejectedExecutionException closed) {
            throw lease.shuttingDown();
        }
        try {
            return call.get(Math.max(0, request.deadline() - System.nanoTime()), TimeUnit.NANOSECONDS)
                    .map(grant -> new BackendGrant<>(backend, grant));
        }
        catch (ExecutionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof Exception e) {
                throw e;
            }
            throw (Error) cause;
        }
        catch (TimeoutException | InterruptedException ex) {
            gaveUp.set(true);
            call.whenComplete((late, error) -> settleLate(backend, request, late, error));
            if (ex instanceof InterruptedException) {
                throw new Outlived(ex);
            }
            throw new Outlived(new TimeoutException(backend.id() + " did not answer the grant request within "
                    + Durations.formatNanos(System.nanoTime() - sentAt) + " (the store may be "
                    + "unreachable; the request is abandoned once its call returns)"));
        }
    }

    /** A grant or a failure that came after the caller stopped waiting must not leave the name blocked. */
    private <G extends Grant> void settleLate(LeaseBackend<G> backend, GrantRequest request, Optional<G> late,
            Throwable error) {
        if (error != null) {
            abandon(backend, request);
        }
        else if (late.isPresent()) {
            G grant = late.get();
            executors.runInBackground(backend.id(), () -> {
                try {
                    backend.release(grant);
                }
                catch (Exception ex) {
                    log.debug("Could not release the grant of lease '" + request.name() + "' that " + backend.id()
                            + " made after its caller stopped waiting (it expires on its own within "
                            + Durations.format(request.ttl()) + "): " + ex);
                }
            });
        }
    }

    /** The request may have reached the store before it failed: whatever grant it made must not block the name. */
    private void abandon(LeaseBackend<?> backend, GrantRequest request) {
        executors.runInBackground(backend.id(), () -> {
            try {
                backend.abandon(request);
            }
            catch (Exception ex) {
                log.debug("Could not remove what the failed grant request for lease '" + request.name() + "' may have "
                        + "left on " + backend.id() + " (it expires on its own within "
                        + Durations.format(request.ttl()) + "): " + ex);
            }
        });
    }

    /** The call outlived the caller's wait; it is settled when it returns, so it must not be abandoned now. */
    private static final class Outlived extends Exception {

        Outlived(Exception toCaller) {
            super(toCaller);
        }

        Exception toCaller() {
            return (Exception) getCause();
        }
    }
}
