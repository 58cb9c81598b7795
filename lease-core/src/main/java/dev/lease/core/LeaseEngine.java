package dev.lease.core;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.Lease;
import dev.lease.LeaseCallback;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.LeasedWork;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantFence;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * The backend-agnostic heart of the library and the {@link LeaseTemplate} bean: acquires with optional waiting,
 * renews in the background, keeps monotonic validity, interrupts the holder's thread on loss, binds leases to
 * threads for {@link dev.lease.LeaseContext} and releases with the held grant only.
 */
public final class LeaseEngine implements LeaseTemplate, AutoCloseable {

    private static final Log log = LogFactory.getLog(LeaseEngine.class);

    /**
     * The least time one grant request gets, even when the caller does not wait (waitFor 0) or its wait ends sooner:
     * a request needs a round trip to be answered at all. So a caller waits at most max(waitFor, this) plus
     * scheduling delays, whatever state the store is in.
     */
    static final Duration MIN_REQUEST_TIME = Duration.ofSeconds(1);

    /** How much longer than asked a backend's wait for a release may take before the engine stops waiting for it. */
    private static final long AWAIT_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final BackendRouter router;
    private final LeaseDefaults defaults;
    private final RenewalExecutors executors;
    private final LongSupplier clock;
    /** What a held lease's validity (its local deadline) is measured on: {@link #clock}, except in tests. */
    private final LongSupplier validityClock;
    private final GrantFencing fencing;
    private final Listeners listeners;
    private final Set<HeldLease> live = ConcurrentHashMap.newKeySet();
    /** One per backend, so that the renewals due on a backend go to it together. */
    private final Map<LeaseBackend<?>, RenewalBatcher> renewals = new ConcurrentHashMap<>();
    /** Where this engine's threads waiting for the same name queue, so that only one of them asks the store. */
    private final LocalLines lines = new LocalLines();
    /** Set once, under the lock of {@link #live}, when closing starts. */
    private volatile boolean closing;
    private volatile Duration shutdownGrace = RenewalExecutors.SHUTDOWN_GRACE;

    /**
     * An engine with no fence at grant and no listeners; {@link #builder} gives the rest.
     *
     * @param router which backend serves each kind
     * @param defaults ttl and renewal interval for leases that set none
     */
    public LeaseEngine(BackendRouter router, LeaseDefaults defaults) {
        this(builder(router).defaults(defaults));
    }

    private LeaseEngine(Builder builder) {
        this.router = builder.router;
        this.listeners = new Listeners(builder.listeners);
        this.defaults = builder.defaults;
        this.fencing = new GrantFencing(builder.grantFence);
        this.clock = builder.clock;
        this.validityClock = builder.validityClock != null ? builder.validityClock : builder.clock;
        this.executors = new RenewalExecutors(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
    }

    /**
     * A builder of an engine on {@code router}, with {@link LeaseDefaults#standard()}, no fence at grant and no
     * listeners until told otherwise.
     *
     * @param router which backend serves each kind
     * @return the builder
     */
    public static Builder builder(BackendRouter router) {
        return new Builder(router);
    }

    /** What an engine is built from: its routing, and optionally its defaults, fence at grant and listeners. */
    public static final class Builder {

        private final BackendRouter router;
        private LeaseDefaults defaults = LeaseDefaults.standard();
        private GrantFence grantFence;
        private List<? extends LeaseEngineListener> listeners = List.of();
        private LongSupplier clock = System::nanoTime;
        private LongSupplier validityClock;

        private Builder(BackendRouter router) {
            this.router = Objects.requireNonNull(router, "router");
        }

        /**
         * @param defaults ttl and renewal interval for leases that set none
         * @return this builder
         */
        public Builder defaults(LeaseDefaults defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * @param grantFence the fence advanced at grant for leases that name a fence resource, or null when there is
         *        none
         * @return this builder
         */
        public Builder grantFence(GrantFence grantFence) {
            this.grantFence = grantFence;
            return this;
        }

        /**
         * @param listeners told about acquires, campaigns, renewals and losses (metrics, traces), in this order
         * @return this builder
         */
        public Builder listeners(List<? extends LeaseEngineListener> listeners) {
            this.listeners = List.copyOf(listeners);
            return this;
        }

        /** The monotonic clock waits and, unless {@link #validityClock} says otherwise, validity are measured on. */
        Builder clock(LongSupplier monotonicClock) {
            this.clock = monotonicClock;
            return this;
        }

        /**
         * The clock held leases measure their validity on; a clock that stands still gives an engine without a local
         * deadline, which the fault suite runs as a mutant its checks must catch.
         */
        Builder validityClock(LongSupplier validityClock) {
            this.validityClock = validityClock;
            return this;
        }

        /** @return the engine, running: it renews what it grants until {@link LeaseEngine#close() closed} */
        public LeaseEngine build() {
            return new LeaseEngine(this);
        }
    }

    @Override
    public Lease acquire(LeaseSpec spec) {
        Resolved resolved = resolve(spec);
        return acquire(resolved).orElseThrow(() -> resolved.unavailable(null));
    }

    @Override
    public Optional<Lease> tryAcquire(LeaseSpec spec) {
        return acquire(resolve(spec)).map(Lease.class::cast);
    }

    @Override
    public <T> T execute(LeaseSpec spec, LeaseCallback<T> work) {
        try {
            return run(spec, work::doInLease, null);
        }
        catch (RuntimeException | Error ex) {
            throw ex;
        }
        catch (Throwable ex) {
            throw new UndeclaredThrowableException(ex, "Leased work for '" + spec.name() + "' threw " + ex);
        }
    }

    @Override
    public <T> T run(LeaseSpec spec, LeasedWork<T> work, Supplier<T> whenBusy) throws Throwable {
        Resolved resolved = resolve(spec);
        Optional<HeldLease> outer = ThreadLeases.findHeld(resolved.name());
        if (outer.isPresent()) {
            return reenter(outer.get(), resolved, work);
        }
        Optional<HeldLease> acquired = acquire(resolved);
        if (acquired.isEmpty()) {
            if (whenBusy == null) {
                throw resolved.unavailable(null);
            }
            if (log.isDebugEnabled()) {
                log.debug("Lease '" + resolved.name() + "' is held by someone else on " + resolved.backend().id()
                        + " (waited " + Durations.format(resolved.waitFor()) + "): skipped (whenBusy = SKIP)");
            }
            return whenBusy.get();
        }
        HeldLease lease = acquired.get();
        ThreadLeases.Frames frames = ThreadLeases.enter(lease);
        lease.bindTo(frames);
        if (lease.isLost()) {
            // Lost before the thread could be told (during a slow grant, or reported while it was returned): the
            // work must not start.
            LeaseLostException lost = lease.lostException(null);
            leave(frames, lease);
            throw lost;
        }
        T result;
        try {
            result = work.run(lease);
        }
        catch (Throwable ex) {
            LeaseLostException lost = lostOrClosed(lease) ? lease.lostException(ex) : null;
            leave(frames, lease);
            throw lost != null ? lost : ex;
        }
        LeaseLostException lost = lostOrClosed(lease) ? lease.lostException(null) : null;
        leave(frames, lease);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /**
     * The leases this engine holds now, sorted by name: what the Actuator {@code leases} endpoint shows. A lease that
     * was lost and whose holder has not returned yet is not listed, nor is one released meanwhile; each is read on its
     * own, so the list is not one atomic picture of all of them. Reading it takes no lease and calls no backend.
     *
     * @return the held leases, possibly empty; a copy the caller may keep
     */
    public List<HeldLeaseSnapshot> held() {
        return live.stream().map(HeldLease::snapshot).filter(Objects::nonNull)
                .sorted(Comparator.comparing(HeldLeaseSnapshot::name).thenComparing(HeldLeaseSnapshot::kind))
                .toList();
    }

    /**
     * An election this instance takes part in, not yet campaigning: {@link Election#start()} starts the campaign,
     * {@link Election#close()} ends it and releases leadership. The name and routing are checked now.
     *
     * @param spec the election: its name, kind, ttl and renewal interval (waitFor is ignored: a campaign waits until
     *        it wins or the election is closed)
     * @param listener told when a term starts and ends, on the election's thread
     * @return the election
     * @throws LeaseConfigurationException when the kind is not routed to a backend that can serve it
     * @throws IllegalArgumentException when the name is not a valid lease name, or the spec names a fence: a term
     *        may write to many resources, each fenced by the writes that carry the term's token
     */
    public Election election(LeaseSpec spec, Election.Listener listener) {
        if (spec.fence().isPresent()) {
            throw new IllegalArgumentException("Election '" + spec.name() + "': fence at grant is for one leased "
                    + "section; a term's writes carry its token (LeaseContext.token()) to the resources they fence");
        }
        resolve(spec);
        return new Election(this, spec, listener);
    }

    boolean isClosed() {
        return closing;
    }

    /** The id of the backend serving {@code kind}, for messages about leases not granted. */
    String backendId(LeaseKind kind) {
        return router.backendFor(kind).id();
    }

    /** How many of this engine's threads queue behind the one that asks the store for the name (tests watch it). */
    int locallyQueued(LeaseKind kind, String name) {
        return lines.queued(router.backendFor(kind), name);
    }

    /** How many names have a local line now; a line goes with the last thread in it (tests watch it). */
    int localLines() {
        return lines.size();
    }

    /** One campaign attempt of an election: waits up to the spec's waitFor for the term's lease. */
    Optional<HeldLease> acquireTerm(LeaseSpec spec) {
        return acquire(resolve(spec));
    }

    /**
     * Runs {@code work} in a term the caller does not own: bound to the thread like a leased section (so it is
     * interrupted when the term is lost), but the term stays held when the work ends.
     */
    <T> T runInTerm(HeldLease term, LeasedWork<T> work) throws Throwable {
        ThreadLeases.Frames frames = ThreadLeases.enter(term);
        term.bindTo(frames);
        T result;
        try {
            if (term.isLost()) {
                throw term.lostException(null);
            }
            result = work.run(term);
        }
        catch (LeaseLostException ex) {
            leaveTerm(frames, term);
            throw ex;
        }
        catch (Throwable ex) {
            LeaseLostException lost = term.isLost() ? term.lostException(ex) : null;
            leaveTerm(frames, term);
            throw lost != null ? lost : ex;
        }
        LeaseLostException lost = term.isLost() ? term.lostException(null) : null;
        leaveTerm(frames, term);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    private static void leaveTerm(ThreadLeases.Frames frames, HeldLease term) {
        term.unbind(frames);
        frames.exit(term);
    }

    /**
     * Checks everything about a lease that does not depend on its name: routing (CORRECTNESS only to fenced
     * backends), ttl against the backend's limit, renewal interval below half the ttl, and that fence at grant can
     * work (CORRECTNESS only, with a fence to advance).
     *
     * @param culprit how to name the lease in error messages, e.g. the annotated method
     * @param fenceAtGrant whether the lease names a resource to fence at grant
     * @throws LeaseConfigurationException naming {@code culprit} and the fix
     */
    public void validate(String culprit, LeaseKind kind, Duration ttl, Duration renewEvery, boolean fenceAtGrant) {
        if (fenceAtGrant) {
            fencing.check(culprit, kind);
        }
        LeaseBackend<?> backend = backendFor(culprit, kind);
        Timing.resolve(culprit, ttl, renewEvery, defaults, backend);
    }

    /**
     * Checks a lease name the way every acquire does: against the rules every name follows ({@link LeaseNames}), then
     * against those of the backend serving {@code kind} ({@link LeaseBackend#validateName}). Lets a name known before
     * the first call, such as an annotation's literal, fail the startup instead of that call.
     *
     * @param culprit how to name the lease in error messages, e.g. the annotated method
     * @throws IllegalArgumentException saying which rule the name breaks
     * @throws LeaseConfigurationException when {@code kind} is not routed to a backend that can serve it
     */
    public void validateName(String culprit, LeaseKind kind, String name) {
        LeaseBackend<?> backend = backendFor(culprit, kind);
        backend.validateName(LeaseNames.validate(name));
    }

    /**
     * Stops renewing. Leases still held are all declared lost first, so their holders are interrupted and get
     * {@link dev.lease.LeaseLostException} instead of running on with a lease nobody renews, and then released in
     * parallel; closing waits for the releases no longer than the shutdown grace period (5 s), after which a release
     * still out goes on in the background and the store lets its grant expire otherwise.
     */
    @Override
    public void close() {
        List<HeldLease> held;
        synchronized (live) {
            if (closing) {
                return;
            }
            // From here on no grant is registered: what is live now is all that will ever need shutting down.
            closing = true;
            held = List.copyOf(live);
        }
        long deadline = System.nanoTime() + shutdownGrace.toNanos();
        lines.close();
        EngineShutdown.loseAndRelease(held, deadline);
        executors.close(deadline);
    }

    /** Sets how long {@link #close()} waits for releases; for tests, before closing. */
    void shutdownGrace(Duration grace) {
        this.shutdownGrace = grace;
    }

    private <T> T reenter(HeldLease lease, Resolved resolved, LeasedWork<T> work) throws Throwable {
        if (lease.kind() != resolved.kind()) {
            throw new IllegalStateException("Lease '" + resolved.name() + "' is already held by this thread as "
                    + lease.kind() + " and cannot be re-entered as " + resolved.kind()
                    + "; give the two sections different names or the same kind");
        }
        lease.checkValid();
        if (resolved.fence() != null) {
            fencing.onReentry(lease, resolved.fence());
        }
        ThreadLeases.Frames frames = ThreadLeases.enter(lease);
        T result;
        try {
            result = work.run(lease);
        }
        finally {
            frames.exit(lease);
        }
        lease.checkValid();
        return result;
    }

    /** A lease the work closed itself no longer covered the rest of the work: that is a loss too. */
    private static boolean lostOrClosed(HeldLease lease) {
        return lease.isLost() || lease.isClosed();
    }

    private static void leave(ThreadLeases.Frames frames, HeldLease lease) {
        frames.exit(lease);
        lease.close();
    }

    /**
     * Tries until granted or {@code waitFor} has passed. A busy lease is waited for; a backend error (a timeout, a
     * reconnect) is retried with the same backoff while time is left, and only the last one is thrown.
     */
    private Optional<HeldLease> acquire(Resolved resolved) {
        LeaseEngineListener.Acquisition observed = listeners.acquiring(resolved.description());
        Optional<HeldLease> lease;
        try {
            lease = acquireOrWait(resolved);
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

    /**
     * A caller that waits queues behind this engine's other threads waiting for the name ({@link LocalLines}), and
     * asks the store once it is first; a caller that does not wait asks at once.
     */
    private Optional<HeldLease> acquireOrWait(Resolved resolved) {
        long waitNanos = resolved.waitFor().toNanos();
        long begin = clock.getAsLong();
        Backoff backoff = new Backoff();
        LocalLines.Ticket ticket = LocalLines.DIRECT;
        try {
            if (waitNanos > 0) {
                ticket = lines.join(resolved.backend(), resolved.name(), begin + waitNanos, clock,
                        resolved::shuttingDown);
                if (ticket == null) {
                    return Optional.empty();
                }
            }
            boolean firstAttempt = true;
            while (true) {
                Exception error = null;
                try {
                    boolean first = firstAttempt;
                    firstAttempt = false;
                    Optional<HeldLease> lease = attempt(resolved, waitNanos - (clock.getAsLong() - begin), ticket,
                            first);
                    if (lease.isPresent()) {
                        if (log.isDebugEnabled()) {
                            log.debug("Lease " + lease.get().nameAndToken() + " acquired on " + resolved.backend().id()
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
                        throw resolved.unavailable(error);
                    }
                    return Optional.empty();
                }
                long pause = Math.min(left, backoff.nextNanos());
                if (error != null) {
                    log.debug("Lease '" + resolved.name() + "': " + resolved.backend().id() + " failed while waiting ("
                            + error + "); retrying for up to " + Durations.formatNanos(left) + " more");
                    TimeUnit.NANOSECONDS.sleep(pause);
                }
                else {
                    awaitRelease(resolved, pause);
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw resolved.unavailable(ex);
        }
        finally {
            if (ticket != null) {
                // A no-op once the ticket holds a grant: the line then stays with it until the grant is freed.
                lines.leave(ticket);
            }
        }
    }

    /**
     * One grant request. Refused once the engine is closing; a grant that races with the start of closing is released
     * at once and refused the same way, so no grant ever escapes the renewal, watchdog and loss handling of a
     * running engine.
     *
     * @param ticket the caller's place in the name's local line, which a grant keeps until it is freed
     * @param firstAttempt whether this is the caller's first request (for the line's fairness count)
     * @throws Exception what the backend threw, after its request was abandoned
     */
    private Optional<HeldLease> attempt(Resolved resolved, long leftNanos, LocalLines.Ticket ticket,
            boolean firstAttempt) throws Exception {
        if (closing) {
            throw resolved.shuttingDown();
        }
        if (Thread.currentThread().isInterrupted()) {
            // Checked before anything is sent: a client may queue the request and only then notice the interrupt,
            // leaving a grant in the store that nobody holds.
            throw new InterruptedException("the thread was interrupted before the grant request was sent");
        }
        LeaseBackend<?> backend = resolved.backend();
        LossRelay relay = new LossRelay();
        GrantRequest request = new GrantRequest(resolved.name(), resolved.timing().ttl(), relay,
                UUID.randomUUID().toString(), System.nanoTime() + Math.max(leftNanos, MIN_REQUEST_TIME.toNanos()));
        long requestedAt = validityClock.getAsLong();
        Optional<? extends BackendGrant<?>> grant;
        try {
            grant = tryAcquire(backend, request);
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
        if (grant.isEmpty()) {
            return Optional.empty();
        }
        HeldLease lease = new HeldLease(resolved.description(), grant.get(), resolved.timing(), requestedAt,
                executors, renewalsOf(backend), validityClock, this::closed, listeners);
        // Before anything can free the grant (a loss needs the relay attached, closing needs it registered).
        lines.granted(ticket, firstAttempt);
        lease.whenFreed(() -> lines.released(ticket));
        boolean registered;
        synchronized (live) {
            registered = !closing && live.add(lease);
        }
        if (!registered) {
            lease.close(false);
            throw resolved.shuttingDown();
        }
        relay.attach(lease);
        lease.start();
        if (resolved.fence() != null) {
            try {
                fencing.atGrant(lease, resolved.fence());
            }
            catch (LeaseLostException refusedByTheFence) {
                // The store just granted it and still holds it: release now, not in the background as after a loss
                // at the store, so that a retry finds the name free at once.
                lease.close(false);
                throw refusedByTheFence;
            }
        }
        return Optional.of(lease);
    }

    /**
     * Asks the backend, giving up at the request's deadline. A backend that does not bound its own calls is asked on a
     * helper thread, never interrupted: the caller stops waiting at the deadline and the request is settled when the
     * call returns (a late grant released, a late failure abandoned), so that nothing it did blocks the name.
     */
    private <G extends Grant> Optional<BackendGrant<G>> tryAcquire(LeaseBackend<G> backend, GrantRequest request)
            throws Exception {
        if (backend.boundsCallsByDeadline()) {
            return backend.tryAcquire(request).map(grant -> new BackendGrant<>(backend, grant));
        }
        long sentAt = System.nanoTime();
        CompletableFuture<Optional<G>> call = new CompletableFuture<>();
        try {
            executors.calls().execute(() -> {
                try {
                    call.complete(backend.tryAcquire(request));
                }
                catch (Throwable ex) {
                    call.completeExceptionally(ex);
                }
            });
        }
        catch (RejectedExecutionException closed) {
            throw resolvedShuttingDown(request, backend);
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
            call.whenComplete((late, error) -> settleLate(backend, request, late, error));
            if (ex instanceof InterruptedException) {
                throw new Outlived(ex);
            }
            throw new Outlived(new TimeoutException(backend.id() + " did not answer the grant request within "
                    + Durations.formatNanos(System.nanoTime() - sentAt) + " (the store may be "
                    + "unreachable; the request is abandoned once its call returns)"));
        }
    }

    /** A lease was closed: it is no longer held. */
    private void closed(HeldLease lease) {
        live.remove(lease);
        fencing.forget(lease);
    }

    /** How many renewals wait on the schedules of all backends; for tests. */
    int renewalsScheduled() {
        return renewals.values().stream().mapToInt(RenewalBatcher::scheduledCount).sum();
    }

    private RenewalBatcher renewalsOf(LeaseBackend<?> backend) {
        return renewals.computeIfAbsent(backend, b -> new RenewalBatcher(b, executors, validityClock));
    }

    private LeaseUnavailableException resolvedShuttingDown(GrantRequest request, LeaseBackend<?> backend) {
        return new LeaseUnavailableException(request.name(), backend.id(),
                "the application is shutting down (the lease engine is closed), so no new lease is granted");
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

    /**
     * Waits for the backend to signal a release, no longer than {@code pause} (and a little grace): a backend whose
     * wait hangs on a dead connection must not keep the caller past its deadline.
     */
    private void awaitRelease(Resolved resolved, long pause) throws InterruptedException {
        LeaseBackend<?> backend = resolved.backend();
        if (backend.boundsCallsByDeadline()) {
            backend.awaitRelease(resolved.name(), Duration.ofNanos(pause));
            return;
        }
        CompletableFuture<Void> wait = new CompletableFuture<>();
        try {
            executors.calls().execute(() -> {
                try {
                    backend.awaitRelease(resolved.name(), Duration.ofNanos(pause));
                }
                catch (Throwable ignored) {
                    // Spurious returns are fine: the next grant request tells how the store is.
                }
                wait.complete(null);
            });
        }
        catch (RejectedExecutionException closed) {
            throw resolved.shuttingDown();
        }
        try {
            wait.get(pause + AWAIT_GRACE_NANOS, TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException | ExecutionException stillWaiting) {
            // The next grant request is bounded by the deadline; the wait ends on its own.
        }
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

    /** The request may have reached the store before it failed: whatever grant it made must not block the name. */
    private void abandon(LeaseBackend<?> backend, GrantRequest request) {
        Runnable cleanUp = () -> {
            try {
                backend.abandon(request);
            }
            catch (Exception ex) {
                log.debug("Could not remove what the failed grant request for lease '" + request.name() + "' may have "
                        + "left on " + backend.id() + " (it expires on its own within "
                        + Durations.format(request.ttl()) + "): " + ex);
            }
        };
        executors.runInBackground(backend.id(), cleanUp);
    }

    private Resolved resolve(LeaseSpec spec) {
        String name = LeaseNames.validate(spec.name());
        String culprit = "lease '" + name + "'";
        LeaseBackend<?> backend = backendFor(culprit, spec.kind());
        backend.validateName(name);
        Timing timing = Timing.resolve(culprit, spec.ttl().orElse(null), spec.renewEvery().orElse(null), defaults,
                backend);
        if (spec.fence().isPresent()) {
            fencing.check(culprit, spec.kind());
        }
        return new Resolved(name, spec.kind(), backend, timing, spec.waitFor(), spec.fence().orElse(null),
                spec.nameTemplate());
    }

    private LeaseBackend<?> backendFor(String culprit, LeaseKind kind) {
        try {
            return router.backendFor(kind);
        }
        catch (LeaseConfigurationException ex) {
            throw new LeaseConfigurationException(culprit + ": " + ex.description(), ex.action());
        }
    }

    private record Resolved(String name, LeaseKind kind, LeaseBackend<?> backend, Timing timing, Duration waitFor,
            String fence, String nameTemplate) {

        LeaseDescription description() {
            return new LeaseDescription(name, nameTemplate, kind, backend.id());
        }

        LeaseUnavailableException unavailable(Exception cause) {
            return new LeaseUnavailableException(name, waitFor, backend.id(), cause);
        }

        LeaseUnavailableException shuttingDown() {
            return new LeaseUnavailableException(name, backend.id(),
                    "the application is shutting down (the lease engine is closed), so no new lease is granted");
        }
    }
}
