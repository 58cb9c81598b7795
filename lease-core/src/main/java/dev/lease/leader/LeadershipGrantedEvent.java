package dev.lease.leader;

import java.util.Objects;
import java.util.Optional;

import dev.lease.FencingToken;

/**
 * This instance became the leader of {@code election}: published (as a Spring application event) when a term
 * starts, on the election's own thread, before any {@link LeaderOnly} method runs in it.
 *
 * @param election the election name
 * @param token the term's fencing token, or empty on backends without tokens
 */
public record LeadershipGrantedEvent(String election, Optional<FencingToken> token) {

    /**
     * Checks the components.
     *
     * @param election the election name
     * @param token the term's fencing token, or empty
     */
    public LeadershipGrantedEvent {
        Objects.requireNonNull(election, "election");
        Objects.requireNonNull(token, "token");
    }
}
