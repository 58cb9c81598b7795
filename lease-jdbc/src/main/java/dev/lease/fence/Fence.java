package dev.lease.fence;

import dev.lease.FencingToken;

/**
 * The resource side of a fenced lease, in one method: a store that remembers, per resource, the highest fencing
 * token it has accepted and refuses lower ones.
 *
 * <p>{@link JdbcFence} implements it over a {@code lease_fence} table; any store with conditional writes can (a
 * JPA entity's column, another service reached over HTTP). The auto-configuration exposes the application's fence
 * as a {@code Fence} bean, which the features that fence on the application's behalf use.
 *
 * <p>A resource must always be written under the same lease name: tokens of different leases say nothing about
 * each other.
 */
@FunctionalInterface
public interface Fence {

    /**
     * Moves the fence of {@code resource} up to {@code token}, in the caller's transaction where the store has
     * transactions, or refuses. Equal tokens pass.
     *
     * @param resource the fenced resource
     * @param token the token the write carries
     * @throws StaleTokenException when the resource already accepted a higher token
     */
    void advance(String resource, FencingToken token);
}
