package dev.lease.leader;

import java.util.Objects;

/**
 * This instance no longer leads {@code election}: published (as a Spring application event) when a term ends, after
 * the {@link LeaderOnly} methods running in it were interrupted. The instance campaigns again unless it is shutting
 * down.
 *
 * @param election the election name
 * @param reason why: the lease was lost (and how), leadership was yielded, or the application is shutting down
 */
public record LeadershipRevokedEvent(String election, String reason) {

    /**
     * Checks the components.
     *
     * @param election the election name
     * @param reason why the term ended
     */
    public LeadershipRevokedEvent {
        Objects.requireNonNull(election, "election");
        Objects.requireNonNull(reason, "reason");
    }
}
