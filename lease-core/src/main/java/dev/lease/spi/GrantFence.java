package dev.lease.spi;

import dev.lease.FencingToken;

/**
 * A fence at the resource that the engine advances to a new lease's token right after the grant and before the
 * leased work runs: {@link dev.lease.Leased#fence()}, {@link dev.lease.LeaseSpec#withFence(String)}.
 *
 * <p>A fence orders writes; it knows nothing of grants. Until the new holder's first write reaches it, a holder that
 * paused past its lease can still write with its older token and be accepted. Advancing the fence at grant closes
 * that window: from the moment this method returns, every write with an older token is refused.
 * {@code dev.lease.fence.JdbcFence} implements it.
 */
@FunctionalInterface
public interface GrantFence {

    /**
     * Moves the fence of {@code resource} up to {@code token} and makes that durable (commits) before returning.
     * Equal tokens pass.
     *
     * @param resource the fenced resource named by the lease
     * @param token the token of the grant just made
     * @throws RuntimeException when the resource already accepted a newer token (the lease was superseded before its
     *         work started) or the fence could not be advanced; the engine then gives the lease up as lost and the
     *         work does not run
     */
    void advanceAtGrant(String resource, FencingToken token);
}
