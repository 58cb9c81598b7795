package dev.lease.fence;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.jdbc.core.JdbcOperations;

import dev.lease.FencingToken;
import dev.lease.spi.LeaseNames;
import dev.lease.sql.SqlIdentifiers;

/**
 * A table whose rows carry their own fence column: {@link #update} writes a row's values and moves its fence to the
 * token in one {@code UPDATE ... WHERE key = ? AND fence <= ?}, and refuses a stale token with
 * {@link StaleTokenException}. The statement is built here, from identifiers checked once, so the guard cannot be
 * forgotten or get its comparison wrong; every value is a bind parameter. Get one from
 * {@link JdbcFence#table(String, String)}.
 *
 * <pre>{@code
 * FencedTable accounts = fence.table("account", "id");
 * accounts.update(accountId, LeaseContext.token(), Map.of("balance", newBalance));
 * }</pre>
 *
 * <p>Unlike {@link JdbcFence#advance}, {@link #update} does not insist on a transaction of its DataSource: the check
 * and the write are one statement, and the database runs a statement atomically even in auto-commit, so no stale
 * holder can slip in between them. A transaction is still what makes further statements of the same operation (an
 * insert beside the update) commit or roll back with it, and keeps the row locked until then, as for any
 * multi-statement write. In a transaction, the row's lock is held until it ends, and the transaction may sit idle no
 * longer than its fence's idle timeout ({@link JdbcFence#JdbcFence(JdbcOperations, FenceListener, java.time.Duration)}).
 *
 * <p>A {@code NULL} fence counts as never written under a lease. Rows are inserted by the application as usual,
 * with the fence column set to the token of the lease it writes under.
 */
public final class FencedTable {

    private final JdbcOperations jdbc;
    private final FenceAtGrant atGrant;
    private final FenceListener listener;
    private final Runnable boundIdleTime;
    private final String table;
    private final String keyColumn;
    private final String fenceColumn;

    FencedTable(JdbcOperations jdbc, FenceAtGrant atGrant, FenceListener listener, Runnable boundIdleTime,
            String table, String keyColumn, String fenceColumn) {
        this.jdbc = jdbc;
        this.atGrant = atGrant;
        this.listener = listener;
        this.boundIdleTime = boundIdleTime;
        this.table = table;
        this.keyColumn = keyColumn;
        this.fenceColumn = fenceColumn;
    }

    /**
     * In the caller's transaction, sets {@code values} on the row whose key column equals {@code key} and moves its
     * fence to {@code token}, unless the row already accepted a higher token. Equal tokens pass.
     *
     * @param key the value of the key column of the row to write
     * @param token the token of the lease the write is made under, usually {@code LeaseContext.token()}
     * @param values column name to new value; names must be plain identifiers, other than the key and fence columns.
     *        Empty just moves the fence, claiming the row for this lease.
     * @throws StaleTokenException when the row already accepted a higher token; the write did not happen
     * @throws EmptyResultDataAccessException when no row has that key
     * @throws IllegalArgumentException when a column name is not a plain identifier
     */
    public void update(Object key, FencingToken token, Map<String, ?> values) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        // Sorted, so the same columns always produce the same SQL text (statement caches).
        Map<String, Object> columns = new TreeMap<>();
        values.forEach((column, value) -> {
            SqlIdentifiers.column(column, "column of " + table);
            if (column.equalsIgnoreCase(keyColumn) || column.equalsIgnoreCase(fenceColumn)) {
                throw new IllegalArgumentException("Column '" + column + "' of " + table + " cannot be set by a fenced "
                        + "update: it is the key or the fence column");
            }
            columns.put(column, value);
        });
        StringBuilder sql = new StringBuilder("UPDATE ").append(table).append(" SET ");
        Object[] args = new Object[columns.size() + 3];
        int i = 0;
        for (Map.Entry<String, Object> column : columns.entrySet()) {
            sql.append(column.getKey()).append(" = ?, ");
            args[i++] = column.getValue();
        }
        sql.append(fenceColumn).append(" = ? WHERE ").append(keyColumn).append(" = ? AND (").append(fenceColumn)
                .append(" IS NULL OR ").append(fenceColumn).append(" <= ?)");
        args[i++] = token.value();
        args[i++] = key;
        args[i] = token.value();
        boundIdleTime.run();
        if (jdbc.update(sql.toString(), args) > 0) {
            return;
        }
        List<Long> fences = jdbc.queryForList("SELECT " + fenceColumn + " FROM " + table + " WHERE " + keyColumn
                + " = ? FOR UPDATE", Long.class, key);
        if (fences.isEmpty()) {
            throw new EmptyResultDataAccessException("No row in " + table + " with " + keyColumn + " = " + key
                    + " to update under lease '" + LeaseNames.printable(token.lease()) + "' (token " + token.value()
                    + ")", 1);
        }
        Long current = fences.get(0);
        // Matched but changed nothing (the same values under the same token): drivers counting changed rows rather
        // than matched ones (MySQL's useAffectedRows=true) report 0 rows. A fence only rises, so a row at exactly
        // this token now was matched by the UPDATE.
        if (current != null && current == token.value()) {
            return;
        }
        throw JdbcFence.rejected(listener, table, new StaleTokenException(resource(key), token,
                current == null ? 0 : current, StaleTokenException.resetStatement(table, fenceColumn, keyColumn, key)));
    }

    /**
     * Fence at grant for a row: moves its fence column up to {@code token}, writing nothing else, in a short
     * transaction of its own committed before this method returns. Call it first in a leased section that writes the
     * row: from then on every write with an older token is refused, even before this holder writes anything.
     *
     * <p>When a transaction of this table's DataSource on this thread already sees the row at {@code token}, nothing
     * is done: that transaction may hold the row's lock (a section that re-entered its lease wrote the row), which a
     * transaction of its own would wait for. A lock wait lasts no longer than the validity of the lease bound to this
     * thread that holds {@code token}, if any.
     *
     * @param key the value of the key column of the row
     * @param token the token of the lease just granted
     * @throws StaleTokenException when the row already accepted a newer token: the lease was superseded
     * @throws EmptyResultDataAccessException when no row has that key
     * @throws org.springframework.dao.CannotAcquireLockException when another transaction held the row's lock for as
     *         long as the lease was valid, naming the lease, the token and the row
     */
    public void advanceAtGrant(Object key, FencingToken token) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        FenceAtGrant.Target row = new FenceAtGrant.Target("row " + resource(key), table,
                "SELECT " + fenceColumn + " FROM " + table + " WHERE " + keyColumn + " = ?", key);
        atGrant.advance(row, token, null, false, () -> update(key, token, Map.of()));
    }

    private String resource(Object key) {
        return table + "[" + keyColumn + "=" + key + "]";
    }

    @Override
    public String toString() {
        return "FencedTable[" + table + ", key " + keyColumn + ", fence " + fenceColumn + "]";
    }
}
