package dev.lease.fence.jpa;

/**
 * Whether a row whose fence is {@code stored} takes a write with {@code token}. One rule in production
 * ({@link #AT_MOST_TOKEN}); the fault suite swaps in one without the comparison, through the session factory
 * property {@value FenceColumnIntegrator#RULE_PROPERTY}, to prove its checks notice.
 */
@FunctionalInterface
interface FenceRule {

    FenceRule AT_MOST_TOKEN = (stored, token) -> stored <= token;

    boolean accepts(long stored, long token);
}
