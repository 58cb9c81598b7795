package dev.lease;

import java.util.Optional;

/**
 * The lease was lost (renewal failed, the backend reported the loss, or its local validity ran out) before the
 * leased work finished. Whatever the work produced may have been produced without the lease: for a
 * {@link LeaseKind#CORRECTNESS} lease, only writes the resource accepted with the fencing token count.
 *
 * <p>When the work itself threw, that exception is attached as the cause.
 */
public class LeaseLostException extends RuntimeException {

    /** The name of the lost lease. */
    private final String lease;
    private final transient FencingToken token;

    /**
     * A lost lease, with a message that names it, its token and the reason.
     *
     * @param lease the lease name
     * @param token the token of the lost grant, or {@code null} when the backend issues none
     * @param reason why the lease was lost
     * @param cause what the work threw, if anything
     */
    public LeaseLostException(String lease, FencingToken token, String reason, Throwable cause) {
        super("Lease '" + Printable.text(lease) + "'" + (token != null ? " (token " + token.value() + ")" : "")
                + " was lost: " + reason + "; the work may have run without it", cause);
        this.lease = lease;
        this.token = token;
    }

    /**
     * The name of the lost lease.
     *
     * @return the lease name
     */
    public String lease() {
        return lease;
    }

    /**
     * The token of the lost grant.
     *
     * @return the token, empty when the backend issues no tokens
     */
    public Optional<FencingToken> token() {
        return Optional.ofNullable(token);
    }
}
