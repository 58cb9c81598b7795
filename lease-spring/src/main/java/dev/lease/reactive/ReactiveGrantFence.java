package dev.lease.reactive;

import reactor.core.publisher.Mono;

import dev.lease.FencingToken;

/**
 * Fence at grant for reactive sections ({@link dev.lease.Leased#fence()}, {@link dev.lease.LeaseSpec#withFence}),
 * without blocking: the twin of {@link dev.lease.spi.GrantFence}. {@code dev.lease.fence.R2dbcFence#advanceAtGrant}
 * fits it ({@code new ReactiveLeaseTemplate(engine, r2dbcFence::advanceAtGrant)}).
 */
@FunctionalInterface
public interface ReactiveGrantFence {

    /**
     * Moves the fence of {@code resource} up to {@code token} and commits it. Equal tokens pass.
     *
     * @param resource the fenced resource named by the lease
     * @param token the token of the grant just made
     * @return completes once the fence is durable; an error when the resource already accepted a newer token or
     *         could not be advanced, after which the lease is given up as lost and the work is not subscribed to
     */
    Mono<Void> advanceAtGrant(String resource, FencingToken token);
}
