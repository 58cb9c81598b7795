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
 */
public record GrantRequest(String name, Duration ttl, LossListener onLoss, String attempt) {

    /**
     * Checks that nothing is missing.
     *
     * @param name the validated lease name
     * @param ttl how long the store should keep the grant without renewal
     * @param onLoss where to report a loss noticed between renewals
     * @param attempt a random id unique to this request
     */
    public GrantRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(onLoss, "onLoss");
        Objects.requireNonNull(attempt, "attempt");
    }

    /**
     * A request with a fresh random {@link #attempt()} id.
     *
     * @param name the validated lease name
     * @param ttl how long the store should keep the grant without renewal
     * @param onLoss where to report a loss noticed between renewals
     */
    public GrantRequest(String name, Duration ttl, LossListener onLoss) {
        this(name, ttl, onLoss, UUID.randomUUID().toString());
    }
}
