package dev.lease.fence;

/**
 * Told when a fence refuses a stale token, for metrics ({@code lease.fence.rejected}) or alerts: every refusal is a
 * write that a holder who had lost its lease tried to make, and that the fence stopped. Called on the writing thread
 * just before the {@link StaleTokenException} is thrown; it must return quickly, and what it throws is ignored.
 */
@FunctionalInterface
public interface FenceListener {

    /**
     * A stale token was refused.
     *
     * @param table the table whose fence refused it: {@value JdbcFence#TABLE} for {@link JdbcFence#advance}, the
     *        table of a {@link FencedTable}
     * @param rejection the exception about to be thrown, with the resource and both tokens
     */
    void rejected(String table, StaleTokenException rejection);
}
