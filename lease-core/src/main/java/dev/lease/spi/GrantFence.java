package dev.lease.spi;

import java.time.Duration;

import dev.lease.FencingToken;

/**
 * A fence at the resource that the engine advances to a new lease's token right after the grant and before the
 * leased work runs: {@link dev.lease.Leased#fence()}, {@link dev.lease.LeaseSpec#withFence(String)}.
 *
 * <p>A fence orders writes; it knows nothing of grants. Until the new holder's first write reaches it, a holder that
 * paused past its lease can still write with its older token and be accepted. Advancing the fence at grant closes
 * that window: from the moment this method returns, every write with an older token is refused.
 * {@code dev.lease.fence.JdbcFence} implements it.
 *
 * <p>The engine calls {@link #advanceAtGrant(String, FencingToken, Duration)} once per grant, and
 * {@link #advanceOnReentry} when a section re-enters a lease its thread already holds and names a resource the grant
 * did not fence; it never fences again the resource the grant fenced. A fence whose advance can wait (a row lock held
 * by another transaction) must give up within the validity it is given, and say that it gave up on a wait: the lease
 * is worth nothing after it, and a wait without end would keep the name blocked while the engine renews it.
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

    /**
     * Like {@link #advanceAtGrant(String, FencingToken)}, giving up any wait after {@code validity}: the time the
     * lease is still valid. What the engine calls; the default ignores the bound, for fences that never wait.
     *
     * @param resource the fenced resource named by the lease
     * @param token the token of the grant just made
     * @param validity how long the lease is still valid: no wait of the advance may last longer
     * @throws RuntimeException as {@link #advanceAtGrant(String, FencingToken)}, and when a wait outlasted
     *         {@code validity} (a message that says so, naming the lease, the token and the resource)
     */
    default void advanceAtGrant(String resource, FencingToken token, Duration validity) {
        advanceAtGrant(resource, token);
    }

    /**
     * Fence at grant named by a section that re-enters a lease its thread already holds, for a resource the grant did
     * not fence. The caller may be inside a transaction of the fence's own store that already wrote the resource and
     * holds its lock: a fence with transactions then joins that transaction, since one of its own would wait for the
     * lock of the caller it suspended, for ever. Without such a transaction it does what
     * {@link #advanceAtGrant(String, FencingToken, Duration)} does, which is the default.
     *
     * @param resource the fenced resource named by the re-entered section
     * @param token the token of the lease held
     * @param validity how long the lease is still valid: no wait of the advance may last longer
     * @throws RuntimeException as {@link #advanceAtGrant(String, FencingToken, Duration)}
     */
    default void advanceOnReentry(String resource, FencingToken token, Duration validity) {
        advanceAtGrant(resource, token, validity);
    }
}
