package dev.lease.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * A request for one grant.
 *
 * @param name the validated lease name; backends may still refuse names their store cannot hold
 * @param ttl how long the store should keep the grant without renewal, measured on the store's clock
 * @param onLoss where to report a loss that the backend notices before the next renewal
 */
public record GrantRequest(String name, Duration ttl, LossListener onLoss) {

    /** Checks that nothing is missing. */
    public GrantRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(onLoss, "onLoss");
    }
}
