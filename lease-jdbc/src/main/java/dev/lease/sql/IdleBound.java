package dev.lease.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A bound on how long a transaction that took a fence's row lock may sit idle, waiting for its client's next
 * statement, before the database ends the session and with it the transaction and its locks.
 *
 * <p>Why: a holder stopped inside its fenced transaction (SIGSTOP, a VM frozen, a debugger) keeps its TCP connection,
 * so the database never ends that transaction on its own, and the fence row stays locked. Every successor's fence at
 * grant and every fenced write of that resource then waits for a lock that is never let go: the name is lost to all
 * for as long as the holder stays stopped. Bounded here, a successor waits at most about that long. Safety does not
 * depend on it: the stopped holder's writes are rolled back with its session, and its commit fails.
 *
 * <p>The bound is set once per transaction on the caller's connection, before the statement that locks: on
 * PostgreSQL {@code idle_in_transaction_session_timeout}, local to the transaction; on MySQL and MariaDB the session's
 * {@code wait_timeout}, set back to what it was when the transaction ends. H2 has no such bound. Internal, like its
 * package: no contract.
 */
public final class IdleBound {

    private IdleBound() {
    }

    /**
     * Bounds the idle time of the transaction {@code connection} runs, unless it is bounded already or the connection
     * is in no transaction bound to this thread (in auto-commit the statement's locks end with it).
     *
     * @param connection the caller's connection, as a {@code ConnectionCallback} gets it
     * @param dialect its database
     * @param bound the longest idle time; null or zero for none
     * @throws SQLException when the database refuses the setting
     */
    public static void apply(Connection connection, SqlDialect dialect, Duration bound) throws SQLException {
        if (bound == null || bound.isZero() || dialect.setIdleTimeout() == null
                || !TransactionSynchronizationManager.isSynchronizationActive()
                || !LockWaits.isInThreadBoundTransaction(connection)) {
            return;
        }
        // Keyed by the physical connection: fences over other JdbcTemplates of the same DataSource share its session
        // setting, and the first one's value to set back is the session's own.
        Connection target = DataSourceUtils.getTargetConnection(connection);
        Key key = new Key(target);
        if (TransactionSynchronizationManager.hasResource(key)) {
            return;
        }
        Object before = read(target, dialect.readIdleTimeout());
        set(target, dialect.setIdleTimeout(), dialect.idleTimeout(bound));
        TransactionSynchronizationManager.bindResource(key, bound);
        TransactionSynchronizationManager.registerSynchronization(new SetBack(key, target, dialect, before));
    }

    private static Object read(Connection connection, String sql) throws SQLException {
        if (sql == null) {
            return null;
        }
        try (PreparedStatement statement = connection.prepareStatement(sql);
                ResultSet rows = statement.executeQuery()) {
            rows.next();
            return SqlDialect.settingToBind(rows.getObject(1));
        }
    }

    private static void set(Connection connection, String sql, Object value) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setObject(1, value);
            statement.execute();
        }
    }

    /** A connection's mark, among the thread's transaction resources, that its transaction is bounded. */
    private record Key(Connection connection) {
    }

    /**
     * Sets a session setting back after the transaction, on its connection, which the transaction manager still holds
     * then and hands back to the pool after.
     */
    private record SetBack(Key key, Connection connection, SqlDialect dialect, Object before)
            implements TransactionSynchronization {

        @Override
        public void afterCompletion(int status) {
            TransactionSynchronizationManager.unbindResourceIfPossible(key);
            if (before == null) {
                return;
            }
            try {
                set(connection, dialect.setIdleTimeout(), before);
            }
            catch (SQLException ex) {
                // The session is gone (ended by this very bound, or the network): so is its setting.
            }
        }
    }
}
