package dev.lease.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What a backend can do, in one value: whether it issues fencing tokens (and if not, why), how the engine should call
 * it, and how long its grants may be relied on. A backend answers it from {@link LeaseBackend#traits()}; start from
 * {@link #fenced()} or {@link #unfenced(String)} and change what differs from the defaults:
 *
 * <pre>{@code
 * return BackendTraits.fenced()
 *         .withRenewsInOneCall(true)
 *         .withMaxTtl(sessionTimeout);
 * }</pre>
 *
 * <p>The defaults are those of the plainest backend: grants are renewed one call each, calls are made on a helper
 * thread that the caller stops waiting for at its deadline, any ttl is honoured, and the store's clock alone decides
 * when a grant ends (no validity margin).
 *
 * @param whyNotFenced why this backend may not serve {@code CORRECTNESS} leases, for error messages; empty exactly
 *        when it issues fencing tokens: every {@link Grant#token()} is then present, strictly increasing per name,
 *        even across restarts of the store
 * @param renewsInOneCall whether one {@link LeaseBackend#renewAll} call confirms its grants in about one round trip
 *        whatever their number, so that the engine should send the renewals that are due together as one call. When
 *        false, the engine renews each grant with {@link LeaseBackend#renew} when it is due, in parallel, so that one
 *        slow grant never holds back the others. A backend that overrides {@code renewAll} natively answers true.
 * @param boundsCallsByDeadline whether {@link LeaseBackend#tryAcquire} and {@link LeaseBackend#awaitRelease} return on
 *        their own by the request's {@link GrantRequest#deadline()} (respectively {@code maxWait}), plus a few
 *        milliseconds, even while the store is unreachable. The engine then calls them on the caller's thread.
 *        Otherwise it calls them on a helper thread and stops waiting at the deadline, because a store client may
 *        block in connection timeouts and retries for far longer than the caller agreed to wait; the request is then
 *        abandoned (its late grant, if any, released) once the call returns. That costs one thread hand-off per call,
 *        small next to a network round trip; a waiter's wait for a release and the grant request after it are one
 *        call, on one helper thread. Only a backend that never blocks on I/O, or bounds every call itself,
 *        should say true.
 * @param maxTtl the longest ttl this backend can honour, if bounded (a ZooKeeper lease cannot outlive its session
 *        timeout); longer ttls are reported as configuration errors
 * @param validityMarginFactor the share of the ttl by which the store may end a grant earlier than the ttl measured on
 *        this process's monotonic clock, in [0, 1): Redlock's servers expire keys on clocks that may drift apart by
 *        that share. See {@link #validityMargin(Duration)}.
 * @param validityMarginFixed the part of the validity margin that does not grow with the ttl (Redlock's 2 ms for
 *        Redis's expiry precision), zero or positive
 */
public record BackendTraits(Optional<String> whyNotFenced, boolean renewsInOneCall, boolean boundsCallsByDeadline,
        Optional<Duration> maxTtl, double validityMarginFactor, Duration validityMarginFixed) {

    /**
     * Checks that the value makes sense.
     *
     * @param whyNotFenced why this backend issues no fencing tokens, or empty when it does
     * @param renewsInOneCall whether one {@link LeaseBackend#renewAll} call costs about one round trip
     * @param boundsCallsByDeadline whether calls never outlast their deadline
     * @param maxTtl the longest ttl this backend can honour, or empty when unbounded
     * @param validityMarginFactor the share of the ttl kept as a margin, in [0, 1)
     * @param validityMarginFixed the fixed part of the margin, zero or positive
     * @throws IllegalArgumentException when the reason is blank, the longest ttl is not positive, or the margin is out
     *         of range
     */
    public BackendTraits {
        Objects.requireNonNull(whyNotFenced, "whyNotFenced");
        Objects.requireNonNull(maxTtl, "maxTtl");
        Objects.requireNonNull(validityMarginFixed, "validityMarginFixed");
        if (whyNotFenced.isPresent() && whyNotFenced.get().isBlank()) {
            throw new IllegalArgumentException("A backend that issues no fencing tokens must say why (it is shown to "
                    + "whoever routes CORRECTNESS leases to it), not a blank reason.");
        }
        if (maxTtl.isPresent() && (maxTtl.get().isZero() || maxTtl.get().isNegative())) {
            throw new IllegalArgumentException("maxTtl " + maxTtl.get() + " is not positive: leave it empty when the "
                    + "backend honours any ttl.");
        }
        if (!(validityMarginFactor >= 0 && validityMarginFactor < 1)) {
            throw new IllegalArgumentException("validityMarginFactor " + validityMarginFactor + " is outside [0, 1): "
                    + "it is the share of the ttl the store may cut a grant short by, such as 0.01.");
        }
        if (validityMarginFixed.isNegative()) {
            throw new IllegalArgumentException("validityMarginFixed " + validityMarginFixed + " is negative: use zero "
                    + "or more.");
        }
    }

    /**
     * A backend whose grants carry fencing tokens, which makes it eligible for {@code CORRECTNESS} leases; the other
     * traits at their defaults.
     *
     * @return the traits of a fenced backend
     */
    public static BackendTraits fenced() {
        return new BackendTraits(Optional.empty(), false, false, Optional.empty(), 0, Duration.ZERO);
    }

    /**
     * A backend whose grants carry no fencing tokens: it serves {@code EFFICIENCY} leases only. The other traits at
     * their defaults.
     *
     * @param whyNotFenced why, for the error that refuses {@code CORRECTNESS} leases routed to it, such as
     *        "Redis issues no fencing token, its key expiry follows the Redis server's wall-clock time, ..."
     * @return the traits of an unfenced backend
     * @throws IllegalArgumentException when the reason is blank
     */
    public static BackendTraits unfenced(String whyNotFenced) {
        return new BackendTraits(Optional.of(Objects.requireNonNull(whyNotFenced, "whyNotFenced")), false, false,
                Optional.empty(), 0, Duration.ZERO);
    }

    /**
     * Whether grants carry fencing tokens, which makes the backend eligible for {@code CORRECTNESS} leases.
     *
     * @return true exactly when {@link #whyNotFenced()} is empty
     */
    public boolean issuesFencingTokens() {
        return whyNotFenced.isEmpty();
    }

    /**
     * These traits, with {@link #renewsInOneCall()} set.
     *
     * @param renewsInOneCall whether one {@link LeaseBackend#renewAll} call costs about one round trip
     * @return the changed copy
     */
    public BackendTraits withRenewsInOneCall(boolean renewsInOneCall) {
        return new BackendTraits(whyNotFenced, renewsInOneCall, boundsCallsByDeadline, maxTtl, validityMarginFactor,
                validityMarginFixed);
    }

    /**
     * These traits, with {@link #boundsCallsByDeadline()} set.
     *
     * @param boundsCallsByDeadline whether calls never outlast their deadline
     * @return the changed copy
     */
    public BackendTraits withBoundsCallsByDeadline(boolean boundsCallsByDeadline) {
        return new BackendTraits(whyNotFenced, renewsInOneCall, boundsCallsByDeadline, maxTtl, validityMarginFactor,
                validityMarginFixed);
    }

    /**
     * These traits, with a longest ttl.
     *
     * @param maxTtl the longest ttl the backend can honour
     * @return the changed copy
     * @throws IllegalArgumentException when {@code maxTtl} is not positive
     */
    public BackendTraits withMaxTtl(Duration maxTtl) {
        return new BackendTraits(whyNotFenced, renewsInOneCall, boundsCallsByDeadline,
                Optional.of(Objects.requireNonNull(maxTtl, "maxTtl")), validityMarginFactor, validityMarginFixed);
    }

    /**
     * These traits, with a validity margin of {@code ttl × factor + fixed}: Redlock's is {@code ttl × drift + 2 ms}.
     *
     * @param factor the share of the ttl, in [0, 1)
     * @param fixed the part that does not grow with the ttl, zero or positive
     * @return the changed copy
     * @throws IllegalArgumentException when the factor or the fixed part is out of range
     */
    public BackendTraits withValidityMargin(double factor, Duration fixed) {
        return new BackendTraits(whyNotFenced, renewsInOneCall, boundsCallsByDeadline, maxTtl, factor, fixed);
    }

    /**
     * How much shorter than the ttl a grant's local validity must be: {@code ttl × }{@link #validityMarginFactor()}
     * {@code + }{@link #validityMarginFixed()}, for a backend whose grant the store may end earlier than the ttl
     * measured on this process's monotonic clock. The engine measures a lease's validity from before the grant
     * request (and each renewal) was sent, so the time the request took is already taken off; this is the rest. A
     * margin that leaves less than the first renewal interval is a configuration error. Zero by default: one store,
     * whose clock alone decides.
     *
     * @param ttl the lease's ttl
     * @return the margin, zero or positive
     */
    public Duration validityMargin(Duration ttl) {
        return Duration.ofNanos((long) (ttl.toNanos() * validityMarginFactor) + validityMarginFixed.toNanos());
    }
}
