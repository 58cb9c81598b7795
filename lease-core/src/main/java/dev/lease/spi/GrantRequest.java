package dev.lease.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

/**
 * A request for one grant.
 *
 * @param name the validated lease name; backends may still refuse names their store cannot hold
 * @param ttl how long the store should keep the grant without renewal, measured on the store's clock
 * @param onLoss where to report a loss that the backend notices before the next renewal
 * @param attempt a random id unique to this request. A backend that marks its grants with an owner id should use
 *        it, so that {@link LeaseBackend#abandon} can find the grant this request may have left in the store.
 * @param deadline when the caller stops waiting for this request, as a {@link System#nanoTime()} value. A backend
 *        should not keep the caller's thread past it (for instance in a store client's retries while the store is
 *        unreachable): by then the engine has given up on the request and abandons it, see
 *        {@link BackendTraits#boundsCallsByDeadline()}. Compare it with {@link #remaining()}, never with {@code <}.
 */
public record GrantRequest(String name, Duration ttl, LossListener onLoss, String attempt, long deadline) {

    /** Far enough for "no deadline", near enough that {@code deadline - System.nanoTime()} cannot overflow. */
    private static final long NO_DEADLINE = Long.MAX_VALUE / 4;

    /**
     * Checks that nothing is missing.
     *
     * @param name the validated lease name
     * @param ttl how long the store should keep the grant without renewal
     * @param onLoss where to report a loss noticed between renewals
     * @param attempt a random id unique to this request
     * @param deadline when the caller stops waiting, as a {@link System#nanoTime()} value
     */
    public GrantRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(onLoss, "onLoss");
        Objects.requireNonNull(attempt, "attempt");
    }

    /**
     * A request without a deadline worth speaking of (about 70 years).
     *
     * @param name the validated lease name
     * @param ttl how long the store should keep the grant without renewal
     * @param onLoss where to report a loss noticed between renewals
     * @param attempt a random id unique to this request
     */
    public GrantRequest(String name, Duration ttl, LossListener onLoss, String attempt) {
        this(name, ttl, onLoss, attempt, System.nanoTime() + NO_DEADLINE);
    }

    /**
     * A request with a fresh random {@link #attempt()} id and no deadline worth speaking of.
     *
     * @param name the validated lease name
     * @param ttl how long the store should keep the grant without renewal
     * @param onLoss where to report a loss noticed between renewals
     */
    public GrantRequest(String name, Duration ttl, LossListener onLoss) {
        this(name, ttl, onLoss, UUID.randomUUID().toString());
    }

    /**
     * How long the caller still waits for this request.
     *
     * @return the time left until {@link #deadline()}, {@link Duration#ZERO} once it has passed
     */
    public Duration remaining() {
        long left = deadline - System.nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }
}
