package dev.lease.core;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.Durations;
import dev.lease.Lease;
import dev.lease.LeaseCallback;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeasedWork;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * The backend-agnostic heart of the library and the {@link LeaseTemplate} bean: acquires with optional waiting,
 * renews in the background, keeps monotonic validity, interrupts the holder's thread on loss, binds leases to
 * threads for {@link dev.lease.LeaseContext} and releases with the held grant only.
 *
 * <p>A call runs along one corridor and does not come back here on the way: its spec is resolved
 * ({@link LeaseRequests}), its grant waited for and asked ({@link Acquirer}, whose store calls {@link BackendCalls}
 * bounds by the caller's deadline), the grant held ({@link HeldLeases}: renewal, fence at grant), and the work run
 * bound to the thread ({@link BoundSections}). An {@link Election} campaigns along the same corridor.
 */
public final class LeaseEngine implements LeaseTemplate, AutoCloseable {

    private static final Log log = LogFactory.getLog(LeaseEngine.class);

    private final Listeners listeners;
    private final GrantFencing fencing;
    private final RenewalExecutors executors;
    /** Where every call starts: its spec checked and resolved. */
    private final LeaseRequests requests;
    /** Where every call goes next: its grant, waited for. */
    private final Acquirer acquirer;
    /** Where every grant ends up until it is closed. */
    private final HeldLeases leases;
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
        GrantFencing fencing = new GrantFencing(builder.grantFence);
        LongSupplier validityClock = builder.validityClock != null ? builder.validityClock : builder.clock;
        this.listeners = new Listeners(builder.listeners);
        this.fencing = fencing;
        this.executors = new RenewalExecutors(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
        this.requests = new LeaseRequests(builder.router, builder.defaults, fencing);
        this.leases = new HeldLeases(executors, validityClock, listeners, fencing);
        this.acquirer = new Acquirer(new BackendCalls(executors), leases, builder.clock, validityClock);
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

    /** Fence at grant, for sections that run on no thread of their own ({@link DetachedSection}). */
    GrantFencing fencing() {
        return fencing;
    }

    @Override
    public Lease acquire(LeaseSpec spec) {
        LeaseRequest request = requests.resolve(spec);
        return acquire(request).orElseThrow(() -> request.unavailable(null));
    }

    @Override
    public Optional<Lease> tryAcquire(LeaseSpec spec) {
        return acquire(requests.resolve(spec)).map(Lease.class::cast);
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
        LeaseRequest request = requests.resolve(spec);
        Optional<HeldLease> outer = ThreadLeases.findHeld(request.name());
        if (outer.isPresent()) {
            return BoundSections.reentering(outer.get(), request, fencing, work);
        }
        Optional<HeldLease> acquired = acquire(request);
        if (acquired.isPresent()) {
            return BoundSections.owning(acquired.get(), work);
        }
        if (whenBusy == null) {
            throw request.unavailable(null);
        }
        if (log.isDebugEnabled()) {
            log.debug("Lease '" + request.name() + "' is held by someone else on " + request.backend().id()
                    + " (waited " + Durations.format(request.waitFor()) + "): skipped (whenBusy = SKIP)");
        }
        return whenBusy.get();
    }

    /**
     * The leases this engine holds now, sorted by name: what the Actuator {@code leases} endpoint shows. A lease that
     * was lost and whose holder has not returned yet is not listed, nor is one released meanwhile; each is read on its
     * own, so the list is not one atomic picture of all of them. Reading it takes no lease and calls no backend.
     *
     * @return the held leases, possibly empty; a copy the caller may keep
     */
    public List<HeldLeaseSnapshot> held() {
        return leases.snapshots();
    }

    /**
     * The names this engine's callers wait for now, sorted by name: what the Actuator {@code leases} endpoint shows
     * as {@code waiting}. Only callers with a {@code waitFor} wait; each is listed from the start of its acquire until
     * it is granted, gives up or fails. Elections' campaigns are not callers and are not listed. Reading it takes no
     * lease and calls no backend.
     *
     * @return the waited-for names, possibly empty; a copy the caller may keep
     */
    public List<WaitingSnapshot> waiting() {
        return acquirer.waiting();
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
     *        may write to many resources, each fenced by the writes that carry the term's token; or a holdAtLeast: a
     *        term is held while the instance is up, not closed by work that ends
     */
    public Election election(LeaseSpec spec, Election.Listener listener) {
        if (spec.fence().isPresent()) {
            throw new IllegalArgumentException("Election '" + spec.name() + "': fence at grant is for one leased "
                    + "section; a term's writes carry its token (LeaseContext.token()) to the resources they fence");
        }
        if (!spec.holdAtLeast().isZero()) {
            throw new IllegalArgumentException("Election '" + spec.name() + "': holdAtLeast is for a leased section "
                    + "that ends; a term lasts while this instance campaigns, so remove it");
        }
        return new Election(spec, listener, new CampaignAttempts(spec, requests, acquirer, listeners));
    }

    /** The id of the backend serving {@code kind}, for messages about leases not granted. */
    String backendId(LeaseKind kind) {
        return requests.backendFor(kind).id();
    }

    /** How many of this engine's threads queue behind the one that asks the store for the name (tests watch it). */
    int locallyQueued(LeaseKind kind, String name) {
        return acquirer.queued(requests.backendFor(kind), name);
    }

    /** How many names have a local line now; a line goes with the last thread in it (tests watch it). */
    int localLines() {
        return acquirer.lines();
    }

    /** How many renewals wait on the schedules of all backends; for tests. */
    int renewalsScheduled() {
        return leases.renewalsScheduled();
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
        requests.validate(culprit, kind, ttl, renewEvery, fenceAtGrant);
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
        requests.validateName(culprit, kind, name);
    }

    /**
     * Stops renewing. Leases still held are all declared lost first, so their holders are interrupted and get
     * {@link dev.lease.LeaseLostException} instead of running on with a lease nobody renews, and then released in
     * parallel, together with those kept after their work by {@link LeaseSpec#withHoldAtLeast holdAtLeast} (released
     * at once, not declared lost); closing waits for the releases no longer than the shutdown grace period (5 s), after which a release
     * still out goes on in the background and the store lets its grant expire otherwise.
     */
    @Override
    public void close() {
        List<HeldLease> held = leases.stopAdmitting();
        if (held == null) {
            return;
        }
        long deadline = System.nanoTime() + shutdownGrace.toNanos();
        acquirer.close();
        EngineShutdown.loseAndRelease(held, deadline);
        executors.close(deadline);
    }

    /**
     * Releases at once every lease kept after its work by {@link LeaseSpec#withHoldAtLeast holdAtLeast}, and keeps
     * none from now on (a lease is released as its work ends) until {@link #resumeHoldingOver()}: the first step of a
     * graceful shutdown, taken while the stores' clients still run (an application context stops its lifecycle beans,
     * Redis connection factories among them, before it closes this engine).
     */
    public void stopHoldingOver() {
        leases.holdOver(false);
    }

    /** Keeps leases after their work by holdAtLeast again, after {@link #stopHoldingOver()} (a context restarted). */
    public void resumeHoldingOver() {
        leases.holdOver(true);
    }

    /** Sets how long {@link #close()} waits for releases; for tests, before closing. */
    void shutdownGrace(Duration grace) {
        this.shutdownGrace = grace;
    }

    private Optional<HeldLease> acquire(LeaseRequest request) {
        return acquirer.acquire(request, listeners.acquiring(request.description()));
    }
}
