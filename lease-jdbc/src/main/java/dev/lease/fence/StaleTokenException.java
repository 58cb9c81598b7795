package dev.lease.fence;

import java.math.BigDecimal;
import java.math.BigInteger;

import dev.lease.FencingToken;
import dev.lease.spi.LeaseNames;

/**
 * A write carried a fencing token lower than one the resource has already accepted: the lease it was issued with
 * was lost (expired or taken over while its holder paused) and a later holder has written since. The write must
 * not happen; let the transaction roll back and stop the work.
 */
public class StaleTokenException extends RuntimeException {

    /** {@link #current()} of a resource that cannot say which token it accepted last. */
    public static final long CURRENT_UNKNOWN = -1;

    /** The fenced resource that refused the write. */
    private final String resource;
    private final transient FencingToken presented;

    /** The fence found at the resource. */
    private final long current;

    /**
     * A write refused by a fence row of {@link JdbcFence} (table {@code lease_fence}).
     *
     * @param resource the fenced resource
     * @param presented the token the write carried
     * @param current the fence found at the resource, the highest token it accepted
     */
    public StaleTokenException(String resource, FencingToken presented, long current) {
        this(resource, presented, current, resetStatement(JdbcFence.TABLE, "fence", "resource", resource));
    }

    /**
     * A write refused by the fence column of one row of a table, such as a {@link FencedTable} row or a JPA entity's
     * {@code @FenceColumn}: when the fence is far ahead of the token, the message gives the statement that resets that
     * row's fence.
     *
     * @param resource the fenced resource, such as {@code Invoice#42}
     * @param presented the token the write carried
     * @param current the fence found in the row, the highest token it accepted
     * @param table the row's table
     * @param fenceColumn the row's fence column
     * @param keyColumn the column that identifies the row
     * @param key the row's key
     */
    public StaleTokenException(String resource, FencingToken presented, long current, String table,
            String fenceColumn, String keyColumn, Object key) {
        this(resource, presented, current, resetStatement(table, fenceColumn, keyColumn, key));
    }

    /**
     * A write refused by a resource that fences by means of its own and cannot say which token it accepted last, such
     * as a Kafka broker that fenced a producer (its epoch was bumped by a later holder): {@link #current()} is then
     * {@value #CURRENT_UNKNOWN}.
     *
     * @param resource the fenced resource, such as a producer's {@code transactional.id}
     * @param presented the token of the lease the write was made under
     * @param refusal what the resource did, in words, for the message
     * @param cause the resource's own refusal
     */
    public StaleTokenException(String resource, FencingToken presented, String refusal, Throwable cause) {
        super("Stale fencing token for resource '" + LeaseNames.printable(resource) + "': lease '"
                + LeaseNames.printable(presented.lease()) + "' presented token " + presented.value() + " but " + refusal
                + ". The lease was lost (it expired or was taken over while its holder paused) and a later holder has"
                + " taken the resource over; this write was refused. Stop the work.", cause);
        this.resource = resource;
        this.presented = presented;
        this.current = CURRENT_UNKNOWN;
    }

    StaleTokenException(String resource, FencingToken presented, long current, String resetStatement) {
        super(message(resource, presented, current, resetStatement));
        this.resource = resource;
        this.presented = presented;
        this.current = current;
    }

    /**
     * The fenced resource that refused the write.
     *
     * @return the resource, such as {@code invoice-42}, or {@code account[id=7]} for a {@link FencedTable} row
     */
    public String resource() {
        return resource;
    }

    /**
     * The token the refused write carried.
     *
     * @return the stale token
     */
    public FencingToken presented() {
        return presented;
    }

    /**
     * The fence found at the resource.
     *
     * @return the highest token the resource had accepted, or {@link #CURRENT_UNKNOWN} when it cannot say
     */
    public long current() {
        return current;
    }

    /**
     * Whether the fence is so far ahead of the token that a counter reset is a likelier cause than an ordinary
     * takeover: more than ten grants, and more than the token itself, ahead.
     *
     * @return true when the message also suggests resetting the fence
     */
    public boolean fenceFarAhead() {
        return current != CURRENT_UNKNOWN && farAhead(presented.value(), current);
    }

    /**
     * The statement that resets the fence of one row, ready to paste: the key as a number, or as an SQL string literal
     * with {@code '} doubled. A text with a backslash has no literal that reads the same on every supported database
     * (MySQL takes a backslash as an escape unless {@code NO_BACKSLASH_ESCAPES} is set), so it gets a bind marker with
     * the value beside it; so does a text with characters that {@link LeaseNames#printable} escapes, shown escaped.
     */
    static String resetStatement(String table, String fenceColumn, String keyColumn, Object key) {
        String update = "UPDATE " + table + " SET " + fenceColumn + " = 0 WHERE " + keyColumn + " = ";
        if (key instanceof Long || key instanceof Integer || key instanceof Short || key instanceof Byte
                || key instanceof BigInteger) {
            return update + key;
        }
        if (key instanceof BigDecimal decimal) {
            return update + decimal.toPlainString();
        }
        String text = String.valueOf(key);
        if (text.indexOf('\\') >= 0 || !LeaseNames.printable(text).equals(text)) {
            return update + "? (bind " + keyColumn + " = " + LeaseNames.printable(text) + ")";
        }
        return update + "'" + text.replace("'", "''") + "'";
    }

    private static boolean farAhead(long presented, long current) {
        return current - presented > Math.max(10, presented);
    }

    private static String message(String resource, FencingToken presented, long current, String resetStatement) {
        StringBuilder message = new StringBuilder("Stale fencing token for resource '")
                .append(LeaseNames.printable(resource)).append("': lease '")
                .append(LeaseNames.printable(presented.lease())).append("' presented token ").append(presented.value())
                .append(" but the resource already accepted token ").append(current)
                .append(". The lease was lost (it expired or was taken over while its holder paused) and a later holder"
                        + " has written; this write was refused. Roll back and stop the work.");
        if (farAhead(presented.value(), current)) {
            message.append(" The fence is far ahead of the token: if the lease's token counter was reset (for example"
                    + " its ZooKeeper znode was deleted), every new holder is refused until the fence is reset. Once no"
                    + " holder of the old counter can still write, reset it: ").append(resetStatement);
        }
        return message.toString();
    }
}
