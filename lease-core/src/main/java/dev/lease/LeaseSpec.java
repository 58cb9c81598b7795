package dev.lease;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * An immutable description of a lease to acquire:
 * {@code LeaseSpec.of(name, kind).withTtl(d).withRenewEvery(d).withWaitFor(d).withFence(resource)}, and
 * {@code .withHoldAtLeast(d)}. Unset ttl and renewal interval fall back to {@code lease.default-ttl} and
 * {@code lease.renew-every} (else ttl/3).
 */
public final class LeaseSpec {

    private final String name;
    private final LeaseKind kind;
    private final Duration ttl;
    private final Duration renewEvery;
    private final Duration waitFor;
    private final String fence;
    private final String nameTemplate;
    private final Duration holdAtLeast;

    private LeaseSpec(String name, LeaseKind kind, Duration ttl, Duration renewEvery, Duration waitFor, String fence,
            String nameTemplate, Duration holdAtLeast) {
        this.name = Objects.requireNonNull(name, "name");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.ttl = positiveOrNull(ttl, "ttl");
        this.renewEvery = positiveOrNull(renewEvery, "renewEvery");
        this.waitFor = Objects.requireNonNull(waitFor, "waitFor");
        if (waitFor.isNegative()) {
            throw new IllegalArgumentException("waitFor must not be negative, got " + Durations.format(waitFor)
                    + " for lease '" + Printable.text(name) + "'");
        }
        if (fence != null && (fence.isBlank() || kind != LeaseKind.CORRECTNESS)) {
            throw new IllegalArgumentException("Lease '" + Printable.text(name) + "': " + (fence.isBlank()
                    ? "the fence resource is blank; name the resource the lease protects, such as 'invoice-42'"
                    : "fence at grant needs a fencing token, so it is for CORRECTNESS leases only, not " + kind));
        }
        this.fence = fence;
        if (nameTemplate != null && nameTemplate.isBlank()) {
            throw new IllegalArgumentException("Lease '" + Printable.text(name) + "': the name template is "
                    + "blank; give the name as declared, with one placeholder per varying part, such as 'invoice-{id}'");
        }
        this.nameTemplate = nameTemplate;
        this.holdAtLeast = Objects.requireNonNull(holdAtLeast, "holdAtLeast");
        if (holdAtLeast.isNegative()) {
            throw new IllegalArgumentException("holdAtLeast must not be negative, got " + Durations.format(holdAtLeast)
                    + " for lease '" + Printable.text(name) + "'; use zero (the default) to release as the work ends");
        }
    }

    /**
     * A lease on {@code name} of the given kind, with default ttl and renewal, that does not wait when busy.
     *
     * @param name the lease name; checked when the lease is acquired, by the rules of {@link Leased#name()}
     * @param kind what the lease protects
     * @return the spec
     */
    public static LeaseSpec of(String name, LeaseKind kind) {
        return new LeaseSpec(name, kind, null, null, Duration.ZERO, null, null, Duration.ZERO);
    }

    /**
     * A copy with this time to live.
     *
     * @param ttl the time to live, positive
     * @return the copy
     * @throws IllegalArgumentException when {@code ttl} is zero or negative
     */
    public LeaseSpec withTtl(Duration ttl) {
        return new LeaseSpec(name, kind, Objects.requireNonNull(ttl, "ttl"), renewEvery, waitFor, fence,
                nameTemplate, holdAtLeast);
    }

    /**
     * A copy renewed at this interval, which must be less than half the ttl (checked when the lease is acquired).
     *
     * @param renewEvery the renewal interval, positive
     * @return the copy
     * @throws IllegalArgumentException when {@code renewEvery} is zero or negative
     */
    public LeaseSpec withRenewEvery(Duration renewEvery) {
        return new LeaseSpec(name, kind, ttl, Objects.requireNonNull(renewEvery, "renewEvery"), waitFor, fence,
                nameTemplate, holdAtLeast);
    }

    /**
     * A copy that waits up to {@code waitFor} for a busy lease.
     *
     * <p>Threads of one application waiting for the same name queue in arrival order, and only the first of them asks
     * the store; when a lease of this application that was taken with a wait is released or lost, the next one in
     * the queue asks the store at once, and gets a grant (and fencing token) of its own (a lease taken without a wait,
     * or by a thread that already held the name, wakes nobody locally: the queue then hears of its release from the
     * store, like another instance would). Should a release hang, the queue moves on once the store may have let the
     * grant expire. Each waiter keeps its own {@code waitFor}, and leaves the
     * queue at its end, when interrupted, or when the application shuts down. Between applications, the store decides:
     * the first in the queue asks like any other instance, and after 16 handovers in a row inside one application it
     * waits for the release the way other instances do (woken by the store, or by its backoff), so that an instance
     * with many waiters cannot keep the name while another one waits. There is no first-come first-served order
     * between instances. A call that does not wait does not queue.
     *
     * @param waitFor how long to wait; zero means do not wait
     * @return the copy
     * @throws IllegalArgumentException when {@code waitFor} is negative
     */
    public LeaseSpec withWaitFor(Duration waitFor) {
        return new LeaseSpec(name, kind, ttl, renewEvery, waitFor, fence, nameTemplate, holdAtLeast);
    }

    /**
     * A copy that advances the fence of {@code resource} to the new token right after the grant, in a transaction of
     * its own committed before the work runs (see {@link Leased#fence()}). For {@code CORRECTNESS} leases only.
     *
     * @param resource the fenced resource, such as {@code "invoice-42"}
     * @return the copy
     * @throws IllegalArgumentException when the resource is blank or the lease is not {@code CORRECTNESS}
     */
    public LeaseSpec withFence(String resource) {
        return new LeaseSpec(name, kind, ttl, renewEvery, waitFor, Objects.requireNonNull(resource, "resource"),
                nameTemplate, holdAtLeast);
    }

    /**
     * A copy that says how the name was made, for metrics and traces: they tag leases by this template, never by
     * the name itself, so that per-entity names ({@code invoice-42}, {@code invoice-43}...) make one time series,
     * not one per entity. {@code @Leased} passes its {@code name} attribute as written ({@code invoice-#{#id}});
     * code that builds names itself should pass a fixed string such as {@code "invoice-{id}"}.
     *
     * @param nameTemplate the name as declared, before its varying parts were filled in
     * @return the copy
     * @throws IllegalArgumentException when the template is blank
     */
    public LeaseSpec withNameTemplate(String nameTemplate) {
        return new LeaseSpec(name, kind, ttl, renewEvery, waitFor, fence,
                Objects.requireNonNull(nameTemplate, "nameTemplate"), holdAtLeast);
    }

    /**
     * A copy whose lease is kept at least {@code holdAtLeast} after its grant (ShedLock's {@code lockAtLeastFor}; see
     * {@link Leased#holdAtLeast()}): work that ends sooner leaves the lease held, and renewed as usual, until then, so
     * that every call for the name in that time, on this instance or another, finds it busy. Closing the lease before
     * then ends the caller's use of it at once ({@link Lease#isValid()} turns false) but not the grant. May exceed the
     * ttl. Closing the engine releases a lease so held at once; a lease lost meanwhile is not held any more.
     *
     * @param holdAtLeast how long after its grant the lease is kept at least; zero means release when closed
     * @return the copy
     * @throws IllegalArgumentException when {@code holdAtLeast} is negative
     */
    public LeaseSpec withHoldAtLeast(Duration holdAtLeast) {
        return new LeaseSpec(name, kind, ttl, renewEvery, waitFor, fence, nameTemplate,
                Objects.requireNonNull(holdAtLeast, "holdAtLeast"));
    }

    /**
     * The lease name.
     *
     * @return the lease name
     */
    public String name() {
        return name;
    }

    /**
     * The lease kind.
     *
     * @return the lease kind
     */
    public LeaseKind kind() {
        return kind;
    }

    /**
     * The time to live, if set here rather than by {@code lease.default-ttl}.
     *
     * @return the ttl, or empty for the default
     */
    public Optional<Duration> ttl() {
        return Optional.ofNullable(ttl);
    }

    /**
     * The renewal interval, if set here rather than by {@code lease.renew-every} or ttl/3.
     *
     * @return the renewal interval, or empty for the default
     */
    public Optional<Duration> renewEvery() {
        return Optional.ofNullable(renewEvery);
    }

    /**
     * How long to wait for a busy lease.
     *
     * @return the wait; zero means do not wait
     */
    public Duration waitFor() {
        return waitFor;
    }

    /**
     * The resource whose fence is advanced at grant, if any.
     *
     * @return the resource, or empty for no fence at grant
     */
    public Optional<String> fence() {
        return Optional.ofNullable(fence);
    }

    /**
     * How long after its grant the lease is kept at least, even when closed sooner.
     *
     * @return the hold; zero means the lease is released when closed
     */
    public Duration holdAtLeast() {
        return holdAtLeast;
    }

    /**
     * How metrics and traces name this lease (their {@code lease.name} tag): the template set by
     * {@link #withNameTemplate(String)}, else the name itself.
     *
     * @return the name template, or the name when none was set
     */
    public String nameTemplate() {
        return nameTemplate != null ? nameTemplate : name;
    }

    private static Duration positiveOrNull(Duration d, String what) {
        if (d != null && (d.isZero() || d.isNegative())) {
            throw new IllegalArgumentException(what + " must be positive, got " + Durations.format(d));
        }
        return d;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LeaseSpec s && name.equals(s.name) && kind == s.kind && Objects.equals(ttl, s.ttl)
                && Objects.equals(renewEvery, s.renewEvery) && waitFor.equals(s.waitFor) && Objects.equals(fence, s.fence)
                && Objects.equals(nameTemplate, s.nameTemplate) && holdAtLeast.equals(s.holdAtLeast);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, kind, ttl, renewEvery, waitFor, fence, nameTemplate, holdAtLeast);
    }

    @Override
    public String toString() {
        return "LeaseSpec[name=" + name + ", kind=" + kind + ", ttl=" + ttl + ", renewEvery=" + renewEvery
                + ", waitFor=" + waitFor + (fence != null ? ", fence=" + fence : "")
                + (nameTemplate != null ? ", nameTemplate=" + nameTemplate : "")
                + (holdAtLeast.isZero() ? "" : ", holdAtLeast=" + holdAtLeast) + "]";
    }
}
