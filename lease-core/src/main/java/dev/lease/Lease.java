package dev.lease;

import java.time.Duration;

/**
 * Exclusive rights on a name for a bounded time, kept alive by background renewal.
 *
 * <p>What a lease can promise: while {@link #isValid()} is true, the backend has not granted the name to anyone
 * else, as far as this process can tell on its monotonic clock. What it cannot promise: that this stays true
 * between checking and acting. The process may pause for any length of time right after the check. That is why
 * {@link LeaseKind#CORRECTNESS} work must send {@link #token()} to the resource it writes and let the resource
 * reject stale tokens.
 *
 * <p>A lease obtained from a {@link Leased} method or {@link LeaseTemplate#execute} is released by the library;
 * one obtained from {@link LeaseTemplate#acquire} must be closed by the caller (try-with-resources).
 */
public interface Lease extends AutoCloseable {

    /**
     * The lease name, after any SpEL template was evaluated.
     *
     * @return the lease name
     */
    String name();

    /**
     * The kind this lease was acquired as.
     *
     * @return the lease kind
     */
    LeaseKind kind();

    /**
     * The fencing token of this grant.
     *
     * @return the token, strictly greater than that of every earlier grant of the same name
     * @throws IllegalStateException if the backend issues no tokens (Redis): such a lease can only be used for
     *         {@link LeaseKind#EFFICIENCY}
     */
    FencingToken token();

    /**
     * Whether the backend issues fencing tokens for this lease, i.e. whether {@link #token()} can be called.
     *
     * @return true when {@link #token()} returns a token
     */
    boolean hasToken();

    /**
     * False once the lease was lost, expired locally or released; never becomes true again.
     *
     * @return whether the lease is still held, as far as this process can tell
     */
    boolean isValid();

    /**
     * How long the lease stays valid if no renewal succeeds, measured on the monotonic clock from before the last
     * successful acquire or renew request was sent.
     *
     * @return the time left, {@link Duration#ZERO} when invalid
     */
    Duration remaining();

    /**
     * Throws when the lease is no longer valid; call it before an irreversible step in long work.
     *
     * @throws LeaseLostException when {@link #isValid()} is false
     */
    void checkValid();

    /**
     * Asks the store, now, whether it still holds this grant: returns once a renewal sent after this call began was
     * answered in time, and throws otherwise. For a step whose safety needs a moment at which the grant was certainly
     * still held, after something else happened: the Kafka fence confirms the grant after it re-initialised its
     * producer, so that a successor granted later re-initialises after it. Waits at most for the lease's validity.
     *
     * @throws LeaseLostException when the store no longer holds the grant, the renewal failed, the validity ran out
     *         first or the thread was interrupted
     * @throws UnsupportedOperationException when this lease cannot ask its store (the default, for leases made
     *         elsewhere than the engine)
     */
    default void confirm() {
        throw new UnsupportedOperationException("Lease '" + name() + "' (" + getClass().getName() + ") cannot ask its"
                + " store whether it still holds the grant; use a lease from LeaseTemplate, @Leased or @LeaderOnly");
    }

    /** Releases the lease with the grant this process holds, so a successor's grant is never touched. Idempotent. */
    @Override
    void close();
}
