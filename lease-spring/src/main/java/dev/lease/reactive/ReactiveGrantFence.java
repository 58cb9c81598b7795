package dev.lease.reactive;

import java.time.Duration;
import java.util.Objects;

import reactor.core.publisher.Mono;

import dev.lease.FencingToken;

/**
 * Fence at grant for reactive sections ({@link dev.lease.Leased#fence()}, {@link dev.lease.LeaseSpec#withFence}),
 * without blocking: the twin of {@link dev.lease.spi.GrantFence}. Build it from {@code dev.lease.fence.R2dbcFence}
 * with {@link #of}: {@code ReactiveGrantFence.of(r2dbcFence::advanceAtGrant, r2dbcFence::advanceOnReentry)} (what
 * the starter declares).
 *
 * <p>{@link ReactiveLeaseTemplate} calls {@link #advanceAtGrant(String, FencingToken, Duration)} once per grant, and
 * {@link #advanceOnReentry} when a section nested in one of the same lease names a resource the grant did not fence;
 * it never fences again the resource the grant fenced (the caller may be inside the transaction that wrote it, whose
 * lock a second advance would wait for). An advance that has not completed when the lease's validity is over costs
 * the lease.
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

    /**
     * Like {@link #advanceAtGrant(String, FencingToken)}, giving up any wait after {@code validity}. What the template
     * calls; the default ignores the bound (the template still gives up on an advance that outlasts the validity).
     *
     * @param resource the fenced resource named by the lease
     * @param token the token of the grant just made
     * @param validity how long the lease is still valid: no wait of the advance may last longer
     * @return as {@link #advanceAtGrant(String, FencingToken)}
     */
    default Mono<Void> advanceAtGrant(String resource, FencingToken token, Duration validity) {
        return advanceAtGrant(resource, token);
    }

    /**
     * Fence at grant named by a section nested in one of the same lease, for a resource the grant did not fence. The
     * caller may be inside a reactive transaction of the fence's own store that already wrote the resource and holds
     * its lock: a fence with transactions then joins that transaction. The default does what
     * {@link #advanceAtGrant(String, FencingToken, Duration)} does.
     *
     * @param resource the fenced resource named by the nested section
     * @param token the token of the lease held
     * @param validity how long the lease is still valid: no wait of the advance may last longer
     * @return as {@link #advanceAtGrant(String, FencingToken)}
     */
    default Mono<Void> advanceOnReentry(String resource, FencingToken token, Duration validity) {
        return advanceAtGrant(resource, token, validity);
    }

    /**
     * A fence from its two bounded steps, such as
     * {@code ReactiveGrantFence.of(r2dbcFence::advanceAtGrant, r2dbcFence::advanceOnReentry)}.
     *
     * @param atGrant advances the fence at grant, in a transaction of its own, within the validity given
     * @param onReentry advances the fence for a nested section, joining the caller's transaction if it has one
     * @return the fence
     */
    static ReactiveGrantFence of(Step atGrant, Step onReentry) {
        Objects.requireNonNull(atGrant, "atGrant");
        Objects.requireNonNull(onReentry, "onReentry");
        return new ReactiveGrantFence() {

            @Override
            public Mono<Void> advanceAtGrant(String resource, FencingToken token) {
                return atGrant.advance(resource, token, null);
            }

            @Override
            public Mono<Void> advanceAtGrant(String resource, FencingToken token, Duration validity) {
                return atGrant.advance(resource, token, validity);
            }

            @Override
            public Mono<Void> advanceOnReentry(String resource, FencingToken token, Duration validity) {
                return onReentry.advance(resource, token, validity);
            }
        };
    }

    /** One advance of a fence, bounded by the lease's validity. */
    @FunctionalInterface
    interface Step {

        /**
         * @param resource the fenced resource
         * @param token the lease's token
         * @param validity how long the lease is still valid, or null for no bound
         * @return completes once advanced
         */
        Mono<Void> advance(String resource, FencingToken token, Duration validity);
    }
}
