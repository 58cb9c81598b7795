package dev.lease.sql;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.PreparedStatementCallback;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Statements run in the caller's transaction that may wait for another transaction's row lock, for the fences
 * ({@code dev.lease.fence}) and the once table ({@code dev.lease.once}): whether the caller's connection is in a
 * transaction that outlasts the statement, and a lock wait bounded by a lock timeout set on that transaction and set
 * back afterwards.
 */
public final class LockWaits {

    private LockWaits() {
    }

    /**
     * Whether the connection runs a transaction that lasts beyond this statement. Not being in auto-commit is not
     * enough: outside a thread-bound transaction each statement may get another pooled connection, so a row lock
     * would stay on one the caller's writes never use. A connection a transaction manager bound to the thread is
     * found among the thread's resources; other transactions on the thread (another DataSource, JMS) bind none for
     * this DataSource, or only an auto-commit one.
     *
     * @param connection the connection a {@code JdbcTemplate} hands to a {@code ConnectionCallback}
     * @return whether it belongs to a transaction bound to this thread
     * @throws SQLException when the connection cannot tell its auto-commit mode
     */
    public static boolean isInThreadBoundTransaction(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            return false;
        }
        // JdbcTemplate passes a close-suppressing proxy; Spring matches the bound connection only once it is unwrapped.
        Connection target = DataSourceUtils.getTargetConnection(connection);
        for (Object key : TransactionSynchronizationManager.getResourceMap().keySet()) {
            if (key instanceof DataSource dataSource && DataSourceUtils.isConnectionTransactional(target, dataSource)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs {@code work} with every lock wait of the caller's transaction bounded by {@code bound}, then sets the lock
     * timeout back.
     *
     * @param bound the longest wait, or null for the connection's own
     * @param timedOut makes the exception for a wait that reached the bound, given the milliseconds waited and the
     *        database's answer
     * @return what {@code work} returns
     */
    public static <T> T bounded(JdbcOperations jdbc, SqlDialect dialect, Duration bound, Supplier<T> work,
            BiFunction<Long, DataAccessException, RuntimeException> timedOut) {
        if (bound == null) {
            return work.get();
        }
        Object before = readLockTimeout(jdbc, dialect);
        setLockTimeout(jdbc, dialect, dialect.lockTimeout(bound));
        long start = System.nanoTime();
        try {
            return work.get();
        }
        catch (DataAccessException ex) {
            if (isLockTimeout(dialect, ex)) {
                throw timedOut.apply((System.nanoTime() - start) / 1_000_000, ex);
            }
            throw ex;
        }
        finally {
            restore(jdbc, dialect, before);
        }
    }

    /**
     * Sets the caller's lock timeout back. On PostgreSQL it is local to the transaction, which a lock timeout aborts:
     * nothing can run in it then, and the setting ends with it anyway.
     */
    private static void restore(JdbcOperations jdbc, SqlDialect d, Object before) {
        try {
            setLockTimeout(jdbc, d, before);
        }
        catch (DataAccessException ex) {
            if (d != SqlDialect.POSTGRESQL) {
                throw ex;
            }
        }
    }

    /** The lock timeout of the connection the caller's transaction runs on, as {@link #setLockTimeout} takes it. */
    private static Object readLockTimeout(JdbcOperations jdbc, SqlDialect d) {
        return SqlDialect.settingToBind(jdbc.queryForObject(d.readLockTimeout(), Object.class));
    }

    private static void setLockTimeout(JdbcOperations jdbc, SqlDialect d, Object value) {
        jdbc.execute(d.setLockTimeout(), (PreparedStatementCallback<Boolean>) statement -> {
            statement.setObject(1, value);
            return statement.execute();
        });
    }

    /** Whether the database ended a statement because its wait for a lock reached the lock timeout. */
    public static boolean isLockTimeout(SqlDialect d, Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && d.isLockTimeout(sql)) {
                return true;
            }
        }
        return false;
    }
}
