package dev.lease.core;

import java.time.Duration;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.LeaseLostException;
import dev.lease.LeaseUnavailableException;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Acquisition, from a resolved call to a held lease: the caller waits its turn in the name's local line, asks the store
 * ({@link BackendCalls}), waits for a release with a growing backoff, retries a failing backend while its wait lasts,
 * and hands each grant to {@link HeldLeases}, which holds it.
 */
final class Acquirer {

    private static final Log log = LogFactory.getLog(Acquirer.class);

    /**
     * The least time one grant request gets, even when the caller does not wait (waitFor 0) or its wait ends sooner:
     * a request needs a round trip to be answered at all. So a caller waits at most max(waitFor, this) plus
     * scheduling delays, whatever state the store is in.
     */
    static final Duration MIN_REQUEST_TIME = Duration.ofSeconds(1);

    private final BackendCalls calls;
    private final HeldLeases leases;
    /** Where this engine's threads waiting for the same name queue, so that only one of them asks the store. */
    private final LocalLines lines = new LocalLines();
    /** What waits are measured on. */
    private final LongSupplier clock;
    /** What validity is measured on: a grant's counts from the moment before its request was sent. */
    private final LongSupplier validityClock;
    /** Who waits for what, for operators. */
    private final WaitingCallers waiting = new WaitingCallers(Clock.systemUTC());

    Acquirer(BackendCalls calls, HeldLeases leases, LongSupplier clock, LongSupplier validityClock) {
        this.calls = calls;
        this.leases = leases;
        this.clock = clock;
        this.validityClock = validityClock;
    }

    /**
     * Tries until granted or the request's {@code waitFor} has passed. A busy lease is waited for; a backend error (a
     * timeout, a reconnect) is retried with the same backoff while time is left, and only the last one is thrown.
     *
     * @param observed told once, on this thread, how the acquire ended
     * @return the lease, or empty when it was held by someone else for the whole wait
     */
    Optional<HeldLease> acquire(LeaseRequest request, LeaseEngineListener.Acquisition observed) {
        Optional<HeldLease> lease;
        try {
            lease = acquireOrWait(request);
        }
        catch (RuntimeException | Error ex) {
            observed.failed(ex);
            throw ex;
        }
        if (lease.isPresent()) {
            lease.get().whenClosed(observed.granted(lease.get().grantToken()));
        }
        else {
            observed.busy();
        }
        return lease;
    }

    /** The names this engine's callers wait for now. */
    List<WaitingSnapshot> waiting() {
        return waiting.snapshots();
    }

    /** Whether the engine stopped granting: it is closing. */
    boolean isClosed() {
        return leases.isClosing();
    }

    /** How many of this engine's threads queue behind the one that asks the store for the name. */
    int queued(LeaseBackend<?> backend, String name) {
        return lines.queued(backend, name);
    }

    /** How many names have a local line now. */
    int lines() {
        return lines.size();
    }

    /** Wakes every thread queued for a name, to fail as the engine closes; nobody queues afterwards. */
    void close() {
        lines.close();
    }

    /**
     * A caller that waits queues behind this engine's other threads waiting for the name ({@link LocalLines}), and
     * asks the store once it is first; a caller that does not wait asks at once.
     */
    private Optional<HeldLease> acquireOrWait(LeaseRequest request) {
        long waitNanos = request.waitFor().toNanos();
        long begin = clock.getAsLong();
        Backoff backoff = new Backoff();
        LocalLines.Ticket ticket = LocalLines.DIRECT;
        Runnable stopWaiting = waitNanos > 0 ? waiting.enter(request) : () -> { };
        try {
            if (waitNanos > 0) {
                ticket = lines.join(request.backend(), request.name(), begin + waitNanos, clock,
                        request::shuttingDown);
                if (ticket == null) {
                    return Optional.empty();
                }
            }
            boolean firstAttempt = true;
            long awaitRelease = 0;
            while (true) {
                Exception error = null;
                try {
                    boolean first = firstAttempt;
                    firstAttempt = false;
                    long await = awaitRelease;
                    awaitRelease = 0;
                    Optional<HeldLease> lease = attempt(request, waitNanos - (clock.getAsLong() - begin), ticket,
                            first, await);
                    if (lease.isPresent()) {
                        if (log.isDebugEnabled()) {
                            log.debug("Lease " + lease.get().nameAndToken() + " acquired on " + request.backend().id()
                                    + " after waiting " + Durations.formatNanos(clock.getAsLong() - begin));
                        }
                        return lease;
                    }
                }
                catch (InterruptedException | IllegalArgumentException | LeaseUnavailableException
                        | LeaseLostException ex) {
                    throw ex;
                }
                catch (Exception ex) {
                    error = ex;
                }
                long left = waitNanos - (clock.getAsLong() - begin);
                if (left <= 0) {
                    if (error != null) {
                        throw request.unavailable(error);
                    }
                    return Optional.empty();
                }
                long pause = Math.min(left, backoff.nextNanos());
                if (error != null) {
                    log.debug("Lease '" + request.name() + "': " + request.backend().id() + " failed while waiting ("
                            + error + "); retrying for up to " + Durations.formatNanos(left) + " more");
                    TimeUnit.NANOSECONDS.sleep(pause);
                }
                else {
                    // Waited for in the next attempt's call, which asks the store as soon as the release comes.
                    awaitRelease = pause;
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw request.unavailable(ex);
        }
        finally {
            stopWaiting.run();
            if (ticket != null) {
                // A no-op once the ticket holds a grant: the line then stays with it until the grant is freed.
                lines.leave(ticket);
            }
        }
    }

    /**
     * One grant request. Refused once the engine is closing.
     *
     * @param ticket the caller's place in the name's local line, which a grant keeps until it is freed
     * @param firstAttempt whether this is the caller's first request (for the line's fairness count)
     * @param awaitNanos how long to wait for the store to signal a release before the request, 0 for not at all
     * @throws Exception what the backend threw, after its request was abandoned
     */
    private Optional<HeldLease> attempt(LeaseRequest request, long leftNanos, LocalLines.Ticket ticket,
            boolean firstAttempt, long awaitNanos) throws Exception {
        if (leases.isClosing()) {
            throw request.shuttingDown();
        }
        if (Thread.currentThread().isInterrupted()) {
            // Checked before anything is sent: a client may queue the request and only then notice the interrupt,
            // leaving a grant in the store that nobody holds.
            throw new InterruptedException("the thread was interrupted before the grant request was sent");
        }
        LossRelay relay = new LossRelay();
        GrantRequest grantRequest = new GrantRequest(request.name(), request.timing().ttl(), relay,
                UUID.randomUUID().toString(), System.nanoTime() + awaitNanos
                        + Math.max(leftNanos - awaitNanos, MIN_REQUEST_TIME.toNanos()));
        AtomicLong requestedAt = new AtomicLong();
        Optional<? extends BackendGrant<?>> grant = calls.grant(request, grantRequest, awaitNanos,
                () -> requestedAt.set(validityClock.getAsLong()));
        if (grant.isEmpty()) {
            return Optional.empty();
        }
        HeldLease lease = leases.lease(request, grant.get(), requestedAt.get());
        // Before anything can free the grant (a loss needs the relay attached, closing needs it registered).
        lines.granted(ticket, firstAttempt);
        GrantRelease release = lease.grantRelease();
        release.whenFreed(() -> lines.released(ticket));
        LeaseBackend<?> backend = request.backend();
        String name = request.name();
        release.localWaiters(() -> lines.queued(backend, name) > 0);
        lines.whenWaiterQueued(ticket, release::waiterQueued);
        leases.admit(lease, relay, request);
        return Optional.of(lease);
    }
}
