package dev.lease.jdbc;

import java.sql.SQLException;

import org.springframework.dao.DuplicateKeyException;

/**
 * The shared token counter ({@code lease.jdbc.token: shared}): one row of the lease table, named {@value #ROW}, whose
 * token every grant of every name draws its own from, so that tokens keep rising across the deletion and re-creation
 * of a name's row. It also sets where a name's new row starts, in either token mode.
 */
final class TokenCounter {

    /** The name of the counter row. The engine refuses blank lease names, so it can never be a lease's row. */
    static final String ROW = "";

    private TokenCounter() {
    }

    /**
     * Takes a free or expired row first, then draws a token from the counter row, then sets it on the row while the row
     * still carries this request as owner: the token of the name's previous holder was set while that holder owned the
     * row, so it was drawn before this take and is lower, whatever was paused, deleted or re-created in between. The
     * reverse order (draw, then take) let a grant that drew early and stalled take a row deleted and re-created
     * meanwhile, and issue a token lower than one already issued for the name. A drawn token can only be lower than the
     * row's when the counter lags the table (a table switched from per-name tokens after the counter was created);
     * the counter is then raised and one more token drawn. The same round trips as before: take, draw, set (which also
     * tells whether the row is still this request's, so no read of the token follows).
     *
     * @return the token, or null when the row is busy (or was taken from this request by a later grant)
     */
    static Long grant(Call call, LeaseStatements sql, String name, String owner, long ttlMillis) throws SQLException {
        if (call.update(sql.take, owner, ttlMillis, name) != 1
                && !(insertSharedRowIfAbsent(call, sql, name) && call.update(sql.take, owner, ttlMillis, name) == 1)) {
            return null;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            long token = draw(call, sql);
            if (call.update(sql.setToken, token, name, owner, token) == 1) {
                return token;
            }
            Long current = call.queryForLong(sql.readToken, name, owner);
            if (current == null) {
                // Expired during a pause and taken by a later grant: nothing of this request's left to free.
                return null;
            }
            call.update(sql.raiseCounter, current, ROW, current);
        }
        free(call, sql, name, owner);
        return null;
    }

    /**
     * Frees the row a shared grant took but did not finish (a concurrency failure stopped it, or the counter could not
     * be brought above the row's token). The failure that stopped the grant (MariaDB's deadlock between a grant and the
     * deletion of idle rows, for one) can strike this statement too, which is then run again ({@link Call}). A failure
     * past that propagates and the engine abandons the request, which frees the row as well: a row is never left held
     * by a request that returned nothing.
     */
    static void free(Call call, LeaseStatements sql, String name, String owner) throws SQLException {
        call.update(sql.abandon, name, owner);
    }

    /**
     * Inserts the free row of a name seen for the first time, or again after its row was deleted, carrying the shared
     * token counter's value (0 without one), read by the inserting statement itself with a lookup by key: a row
     * deleted under shared tokens issued tokens up to that at most, and the first grant of the new row must lie above
     * them (with 0, an instance still or again on per-name tokens would hand out 1 for a name that already had 9000).
     * Not the table's highest token: that would scan the whole table, and lock it on MySQL, for every new name. True when
     * this call inserted the row. The statement never fails on an existing row, except for H2's race between two
     * first inserts.
     */
    static boolean insertPerNameRowIfAbsent(Call call, LeaseStatements sql, String name) throws SQLException {
        return insertIfAbsent(call, sql.insertIfAbsent, sql.insertBindsNameTwice() ? new Object[] {name, name}
                : new Object[] {name});
    }

    /**
     * Inserts the free row of a name seen for the first time, or again after its idle row was deleted, carrying a
     * token drawn now. Safety does not depend on it (a grant draws its token after taking the row, see
     * {@link #grant}); it keeps the row's token near the name's last ones for an instance still on per-name
     * tokens, whose next grant counts on from it.
     */
    private static boolean insertSharedRowIfAbsent(Call call, LeaseStatements sql, String name) throws SQLException {
        long floor = draw(call, sql);
        return insertIfAbsent(call, sql.insertIfAbsentWithToken, sql.insertBindsNameTwice()
                ? new Object[] {name, floor, name} : new Object[] {name, floor});
    }

    /** True when this statement inserted the row; false when it existed (H2 alone may say so by a duplicate key). */
    private static boolean insertIfAbsent(Call call, String insert, Object... args) throws SQLException {
        try {
            return call.update(insert, args) > 0;
        }
        catch (SQLException ex) {
            if (call.failedWith(DuplicateKeyException.class, "insert", insert, ex)) {
                return false;
            }
            throw ex;
        }
    }

    /** The next shared token, creating the counter row on first use. */
    private static long draw(Call call, LeaseStatements sql) throws SQLException {
        Long token = drawOnce(call, sql);
        if (token == null) {
            Object[] args = sql.insertBindsNameTwice() ? new Object[] {ROW, ROW} : new Object[] {ROW};
            try {
                call.update(sql.insertCounter, args);
            }
            catch (SQLException ex) {
                if (!call.failedWith(DuplicateKeyException.class, "insert", sql.insertCounter, ex)) {
                    throw ex;
                }
            }
            token = drawOnce(call, sql);
        }
        if (token == null) {
            throw new SQLException("The shared token counter row of " + sql.table + " could not be created");
        }
        return token;
    }

    /** The counter row's next value, or null when there is no counter row yet. */
    private static Long drawOnce(Call call, LeaseStatements sql) throws SQLException {
        if (sql.readDrawnToken == null) {
            return call.queryForLong(sql.drawToken, ROW);
        }
        return call.update(sql.drawToken, ROW) == 0 ? null : call.queryForLong(sql.readDrawnToken);
    }
}
