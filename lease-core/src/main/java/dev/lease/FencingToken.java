package dev.lease;

import java.util.Objects;

/**
 * A number that strictly increases with every grant of the same lease name, issued by a backend that can
 * guarantee it (ZooKeeper, JDBC, in-memory).
 *
 * <p>The token is what makes a {@link LeaseKind#CORRECTNESS} lease safe: send it with every write to the
 * protected resource and let the resource refuse any token lower than the highest it has accepted. A holder
 * that paused past its lease and woke up carries an old token, so its late writes are rejected instead of
 * silently overwriting the work of the next holder. Without that check at the resource, a lease is a hint,
 * not a guarantee.
 *
 * <p>Tokens of different lease names are unrelated and cannot be compared.
 *
 * @param lease the lease name the token was issued for
 * @param value the token; higher means a later grant of the same name
 */
public record FencingToken(String lease, long value) implements Comparable<FencingToken> {

    /**
     * Checks that the token names its lease.
     *
     * @param lease the lease name the token was issued for
     * @param value the token; higher means a later grant of the same name
     */
    public FencingToken {
        Objects.requireNonNull(lease, "lease");
    }

    /**
     * Orders two tokens of the same lease.
     *
     * @param other a token of the same lease
     * @return negative, zero or positive as this token is older than, equal to or newer than {@code other}
     * @throws IllegalArgumentException when the tokens belong to different leases: their values say nothing
     *         about each other
     */
    @Override
    public int compareTo(FencingToken other) {
        if (!lease.equals(other.lease)) {
            throw new IllegalArgumentException("Fencing tokens of different leases cannot be compared: '"
                    + Printable.text(lease) + "' and '" + Printable.text(other.lease) + "'");
        }
        return Long.compare(value, other.value);
    }

    /**
     * Whether this token was issued after {@code other} for the same lease.
     *
     * @param other a token of the same lease
     * @return true when this token is strictly greater
     * @throws IllegalArgumentException when the tokens belong to different leases
     */
    public boolean isNewerThan(FencingToken other) {
        return compareTo(other) > 0;
    }

    @Override
    public String toString() {
        return lease + "#" + value;
    }
}
