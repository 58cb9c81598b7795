package dev.lease.reactive;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.lease.Lease;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.WhenBusy;
import dev.lease.core.Campaigns;
import dev.lease.core.DetachedSection;
import dev.lease.core.Election;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.Leadership;

/**
 * The reactive twin of {@link dev.lease.LeaseTemplate}, and what {@code @Leased} {@code Mono}/{@code Flux} methods
 * run through. Nothing happens until subscription; then the lease is acquired without blocking the subscriber's
 * thread (grant requests go to a scheduler for blocking work, a busy lease is waited for on a timer), the work is
 * subscribed to with the lease in the Reactor context ({@link ReactiveLeaseContext}), and the lease is released when
 * the work completes or fails. When the subscriber cancels, the work is cancelled at once, but the lease is released
 * only at the end of its validity: nothing tells when work already running (blocking code that ignores the
 * interrupt) has stopped, and another instance must not run the same section beside it.
 *
 * <p>When the lease is lost, the work's subscription is cancelled at once and the subscriber gets
 * {@link LeaseLostException}: the twin of the interrupt. Work that completes or fails after its lease was lost (or
 * released by the work itself) ends with {@code LeaseLostException} too, as a {@code @Leased} method would: what it
 * produced may have been produced without the lease. Elements a {@code Flux} emitted before the loss were emitted
 * under the lease.
 *
 * <pre>{@code
 * Mono<Receipt> receipt = reactiveLeases.execute(LeaseSpec.of("invoice-" + id, LeaseKind.CORRECTNESS),
 *         lease -> billing.bill(id, lease.token()));
 * }</pre>
 */
public final class ReactiveLeaseTemplate {

    /** How long after the lease's validity a fence at grant without a bound of its own is given up. */
    private static final Duration FENCE_GRACE = Duration.ofSeconds(1);

    private final GrantRequests grants;
    private final ReactiveGrantFence fence;

    /**
     * Sections whose fence at grant, if any, the engine advances ({@link dev.lease.spi.GrantFence}, blocking, on the
     * bounded elastic scheduler).
     *
     * @param engine the engine that grants, renews and watches the leases
     */
    public ReactiveLeaseTemplate(LeaseEngine engine) {
        this(engine, null);
    }

    /**
     * @param engine the engine that grants, renews and watches the leases
     * @param fence the fence advanced at grant without blocking, such as {@link ReactiveGrantFence#of} over an
     *        R2dbcFence; null to leave fence at grant to the engine's own fence
     */
    public ReactiveLeaseTemplate(LeaseEngine engine, ReactiveGrantFence fence) {
        this(engine, fence, Schedulers.boundedElastic());
    }

    /**
     * @param engine the engine that grants, renews and watches the leases
     * @param fence the fence advanced at grant without blocking, or null
     * @param blocking where the engine's blocking calls (grant requests, releases) run; never an event loop
     */
    public ReactiveLeaseTemplate(LeaseEngine engine, ReactiveGrantFence fence, Scheduler blocking) {
        this.grants = new GrantRequests(Objects.requireNonNull(engine, "engine"), Objects.requireNonNull(blocking,
                "blocking"));
        this.fence = fence;
    }

    /**
     * Whether this template advances fences at grant itself ({@link ReactiveGrantFence}) rather than the engine.
     *
     * @return true when built with a reactive fence
     */
    public boolean fencesAtGrant() {
        return fence != null;
    }

    /**
     * Runs {@code work} under the lease; {@link dev.lease.LeaseUnavailableException} when it is still busy after
     * {@link LeaseSpec#waitFor()}.
     *
     * @param <T> the result type
     * @param spec the lease
     * @param work the work, given the lease, subscribed to while it is held
     * @return the work's result
     */
    public <T> Mono<T> execute(LeaseSpec spec, Function<Lease, ? extends Mono<T>> work) {
        return run(spec, work, WhenBusy.THROW).singleOrEmpty();
    }

    /**
     * Like {@link #execute}, for work with many elements.
     *
     * @param <T> the element type
     * @param spec the lease
     * @param work the work, given the lease, subscribed to while it is held
     * @return the work's elements
     */
    public <T> Flux<T> executeMany(LeaseSpec spec, Function<Lease, ? extends Publisher<T>> work) {
        return run(spec, work, WhenBusy.THROW);
    }

    /**
     * Runs {@code work} under the lease the way the {@code @Leased} interceptor does: a section nested in one of the
     * same name (in the Reactor context) re-enters its lease; a lease still busy after {@link LeaseSpec#waitFor()}
     * completes empty with {@link WhenBusy#SKIP}, else fails with {@link dev.lease.LeaseUnavailableException}.
     *
     * @param <T> the element type
     * @param spec the lease
     * @param work the work, given the lease, subscribed to while it is held
     * @param whenBusy what to do when the lease stays busy
     * @return the work's elements
     */
    public <T> Flux<T> run(LeaseSpec spec, Function<Lease, ? extends Publisher<T>> work, WhenBusy whenBusy) {
        Objects.requireNonNull(work, "work");
        String resource = spec.fence().orElse(null);
        // Without a reactive fence, the engine fences at grant (blocking, on the scheduler for blocking calls).
        LeaseSpec granted = fence != null && resource != null ? withoutFence(spec) : spec;
        String fencedHere = fence != null ? resource : null;
        return Flux.deferContextual(context -> {
            Optional<Lease> outer = ReactiveLeaseContext.find(context, spec.name());
            if (outer.isPresent()) {
                return reenter(outer.get(), ReactiveSection.holding(context, outer.get()), spec, work);
            }
            Mono<ReactiveSection> acquired = grants.acquire(granted)
                    .map(section -> new ReactiveSection(section, resource));
            if (whenBusy != WhenBusy.SKIP) {
                acquired = acquired.switchIfEmpty(Mono.error(() -> grants.busy(spec)));
            }
            return Flux.usingWhen(acquired, section -> guarded(section, fencedHere, work), this::release,
                    (section, error) -> release(section), grants::releaseAfterCancel);
        });
    }

    /**
     * Runs {@code work} in the current term of {@code leadership}, which this instance must lead, as
     * {@code @LeaderOnly} does: empty at once when it does not lead; cancelled with {@link LeaseLostException} when
     * the term ends. The term stays held when the work ends.
     *
     * @param <T> the element type
     * @param leadership an election of the {@code LeaderElections} bean
     * @param work the work, given the term's lease
     * @return the work's elements, or empty when not leader
     * @throws IllegalArgumentException when {@code leadership} is not one of the engine's elections
     */
    public <T> Flux<T> asLeader(Leadership leadership, Function<Lease, ? extends Publisher<T>> work) {
        if (!(leadership instanceof Campaigns campaigns)) {
            throw new IllegalArgumentException("Election '" + leadership.election() + "' is not run by the lease "
                    + "engine (" + leadership.getClass().getName() + "); pass one from the LeaderElections bean");
        }
        // The campaign running at subscription: a context stopped and started again campaigns anew.
        return Flux.usingWhen(Mono.fromSupplier(() -> Optional.ofNullable(campaigns.running())
                        .flatMap(DetachedSection::inTerm)).flatMap(Mono::justOrEmpty)
                        .map(section -> new ReactiveSection(section, null)),
                section -> guarded(section, null, work), this::release, (section, error) -> release(section),
                this::release);
    }

    /**
     * The work under a held section: fenced first when {@code resource} is not null, cancelled with the loss, and
     * ended with {@link LeaseLostException} when the lease did not cover all of it.
     */
    private <T> Flux<T> guarded(ReactiveSection held, String resource, Function<Lease, ? extends Publisher<T>> work) {
        DetachedSection section = held.detached();
        Lease lease = section.lease();
        // Completes on loss: takeUntilOther cancels the work when its other publisher signals, but not when that one
        // fails (it would only pass the error on), so the loss completes it and the check below turns that into the
        // LeaseLostException.
        Sinks.Empty<Void> loss = Sinks.empty();
        Runnable unwatch = section.whenLost(lost -> loss.tryEmitEmpty());
        Flux<T> body = Flux.defer(() -> {
            held.workSubscribed();
            return work.apply(lease);
        });
        if (resource != null) {
            body = withinValidity(lease, resource,
                    validity -> fence.advanceAtGrant(resource, lease.token(), validity))
                    .onErrorResume(refused -> {
                        // Giving up declares the loss; the caller gets it with the fence's refusal as its cause.
                        unwatch.run();
                        return grants.giveUp(section, resource, refused);
                    })
                    .thenMany(body);
        }
        return body
                // The loss is heard on the engine's thread that noticed it: the subscriber's handlers run elsewhere.
                .takeUntilOther(loss.asMono().publishOn(Schedulers.parallel()))
                .onErrorMap(error -> !(error instanceof LeaseLostException),
                        error -> section.lostOrClosed(error).map(Throwable.class::cast).orElse(error))
                .concatWith(Mono.defer(() -> section.lostOrClosed(null).map(Mono::<T>error).orElseGet(Mono::empty)))
                .contextWrite(held::into)
                .doFinally(signal -> unwatch.run());
    }

    /**
     * A section nested in one of the same lease: runs in it, never fences again what the grant fenced, and fences
     * another resource it names in the caller's transaction when it has one (through the reactive fence), else as at
     * grant; a fence that refuses or fails costs the lease.
     */
    private <T> Flux<T> reenter(Lease lease, Optional<ReactiveSection> outer, LeaseSpec spec,
            Function<Lease, ? extends Publisher<T>> work) {
        if (lease.kind() != spec.kind()) {
            return Flux.error(new IllegalStateException("Lease '" + spec.name() + "' is already held by this "
                    + "reactive section as " + lease.kind() + " and cannot be re-entered as " + spec.kind()
                    + "; give the two sections different names or the same kind"));
        }
        if (!lease.isValid()) {
            return Flux.error(() -> new LeaseLostException(lease.name(), lease.hasToken() ? lease.token() : null,
                    "it was lost before the nested section started", null));
        }
        Flux<T> body = Flux.defer(() -> work.apply(lease));
        String resource = spec.fence().orElse(null);
        if (resource == null || outer.isPresent() && outer.get().fencedAtGrant(resource)) {
            return body;
        }
        if (outer.isEmpty()) {
            return Flux.error(new IllegalStateException("Lease '" + spec.name() + "' is in the Reactor context, but "
                    + "not through a section of this ReactiveLeaseTemplate, so the nested section cannot fence '"
                    + resource + "': run both sections through one ReactiveLeaseTemplate"));
        }
        DetachedSection section = outer.get().detached();
        if (fence == null) {
            return grants.fenceOnReentry(section, resource).thenMany(body);
        }
        return withinValidity(lease, resource,
                        validity -> fence.advanceOnReentry(resource, lease.token(), validity))
                .onErrorResume(refused -> grants.giveUp(section, resource, refused))
                .thenMany(body);
    }

    /** Releases the section's lease at once: its work ended, or was never subscribed to. */
    private Mono<Void> release(ReactiveSection section) {
        return grants.release(section.detached());
    }

    /**
     * A fence advance given the lease's validity, and given up soon after it: a fence's own bound (a lock timeout set
     * to the validity) ends first and says what it waited for; this one ends a fence that has none. After the
     * validity the lease is worth nothing, and a wait without end would keep the name blocked while it is renewed.
     */
    private static Mono<Void> withinValidity(Lease lease, String resource, Function<Duration, Mono<Void>> advance) {
        return Mono.defer(() -> {
            Duration validity = lease.remaining();
            return advance.apply(validity).timeout(validity.plus(FENCE_GRACE), Mono.error(() -> new TimeoutException(
                    "Fence at grant of resource '" + resource + "' for lease '" + lease.name() + "' (token "
                            + lease.token().value() + ") did not complete within the lease's validity ("
                            + validity.toMillis() + " ms), so the lease is worth nothing by now: the fence waited for "
                            + "something that did not end (a lock held by another transaction?) and set no bound of "
                            + "its own")));
        });
    }

    private static LeaseSpec withoutFence(LeaseSpec spec) {
        LeaseSpec copy = LeaseSpec.of(spec.name(), spec.kind()).withWaitFor(spec.waitFor())
                .withNameTemplate(spec.nameTemplate()).withHoldAtLeast(spec.holdAtLeast());
        copy = spec.ttl().map(copy::withTtl).orElse(copy);
        return spec.renewEvery().map(copy::withRenewEvery).orElse(copy);
    }
}
