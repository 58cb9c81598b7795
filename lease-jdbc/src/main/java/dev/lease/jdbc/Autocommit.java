package dev.lease.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs each call of the backend on a connection taken from the DataSource for the call alone, every statement
 * committed by the database as it executes: lease bookkeeping never joins, and is never rolled back with, a business
 * transaction running on the same thread and DataSource, and no lease statement runs inside a transaction that spans
 * a round trip. A connection the pool hands out with autocommit off is switched for the call and back.
 *
 * @param jdbc the template over the DataSource, whose exception translator names failures (it reads the database's
 *        error codes on first use, not when built)
 * @param table the lease table, as failures name it
 */
record Autocommit(JdbcTemplate jdbc, String table) {

    /** Bound on any one statement, so a stuck connection fails a call instead of hanging it. */
    static final int MAX_STATEMENT_SECONDS = 10;

    // The backend's own category, as before the backend was split: logging configurations name it.
    private static final Log log = LogFactory.getLog(JdbcLeaseBackend.class);

    /** The statements of one call. */
    @FunctionalInterface
    interface Work<T> {
        T run(Call call) throws SQLException;
    }

    /**
     * Runs one call's statements, each bounded by {@code ttlMillis} rounded up to whole seconds (at least one, at most
     * {@value #MAX_STATEMENT_SECONDS}).
     *
     * @param task how failures name the call, such as {@code grant}
     */
    <T> T run(String task, long ttlMillis, Work<T> work) {
        int timeoutSeconds = (int) Math.max(1, Math.min(MAX_STATEMENT_SECONDS, (ttlMillis + 999) / 1000));
        Connection connection;
        try {
            connection = jdbc.getDataSource().getConnection();
        }
        catch (SQLException ex) {
            throw translate(task + " on " + table, null, ex);
        }
        boolean switched = false;
        try {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
                switched = true;
            }
            return work.run(new Call(connection, timeoutSeconds, this));
        }
        catch (SQLException ex) {
            throw translate(task + " on " + table, null, ex);
        }
        finally {
            giveBack(connection, switched);
        }
    }

    /**
     * Every statement was committed as it ran, so nothing that fails here changes the call's outcome: a renewal that
     * succeeded stays a success, a grant that committed stays granted.
     */
    private void giveBack(Connection connection, boolean switched) {
        try {
            if (switched) {
                connection.setAutoCommit(false);
            }
        }
        catch (SQLException ex) {
            log.debug("Could not switch a connection of " + table + " back to autocommit off: " + ex);
        }
        try {
            connection.close();
        }
        catch (SQLException ex) {
            log.debug("Could not close a connection of " + table + ": " + ex);
        }
    }

    /** Spring's name for a failure, such as {@code DuplicateKeyException}. */
    DataAccessException translate(String task, String sql, SQLException ex) {
        DataAccessException translated = jdbc.getExceptionTranslator().translate(task, sql, ex);
        return translated != null ? translated
                : new UncategorizedSQLException(task, sql, ex);
    }
}
