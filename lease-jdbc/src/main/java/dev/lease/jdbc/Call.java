package dev.lease.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.RowMapper;

/**
 * The statements of one call, on one connection in autocommit mode ({@link Autocommit}), each bounded by the same
 * timeout.
 *
 * <p>Each statement is a transaction of its own, so a statement the database rolled back as the victim of a deadlock
 * or a serialization failure did nothing, and the database's advice, to run it again, is taken here, for every
 * statement of every call, up to {@value #VICTIM_ATTEMPTS} times in all: MariaDB picks a grant, a release or the
 * deletion of idle rows as such a victim when they meet on the same rows, and a call that gave up at once failed an
 * acquire, a release or a sweep that one more round trip completes. Only SQLSTATE {@code 40001} and {@code 40P01}
 * count: {@code 40003} (completion unknown) may have committed, and a lock wait timeout has waited long enough.
 */
record Call(Connection connection, int timeoutSeconds, Autocommit calls) {

    /** How many times in all a statement runs while the database rolls it back as a victim. */
    static final int VICTIM_ATTEMPTS = 3;

    /** One statement, run again from its preparation when it was a victim. */
    @FunctionalInterface
    private interface Statement<T> {
        T run() throws SQLException;
    }

    int update(String sql, Object... args) throws SQLException {
        return runAgainIfVictim(() -> {
            try (PreparedStatement statement = prepare(sql, args)) {
                return statement.executeUpdate();
            }
        });
    }

    /** Runs a statement whatever it returns. */
    boolean execute(String sql, Object... args) throws SQLException {
        return runAgainIfVictim(() -> {
            try (PreparedStatement statement = prepare(sql, args)) {
                return statement.execute();
            }
        });
    }

    /** The rows a query returns. */
    <T> List<T> query(String sql, RowMapper<T> rows, Object... args) throws SQLException {
        return runAgainIfVictim(() -> {
            List<T> read = new ArrayList<>();
            try (PreparedStatement statement = prepare(sql, args); ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    read.add(rows.mapRow(result, read.size()));
                }
            }
            return read;
        });
    }

    /** How many characters the first column of a query's result holds, as the driver reports it (0: not reported). */
    int precisionOfFirstColumn(String sql) throws SQLException {
        return runAgainIfVictim(() -> {
            try (PreparedStatement statement = prepare(sql); ResultSet rows = statement.executeQuery()) {
                return rows.getMetaData().getPrecision(1);
            }
        });
    }

    /** The first column of the first row as a number, or null without a row. */
    Long queryForLong(String sql, Object... args) throws SQLException {
        return runAgainIfVictim(() -> {
            try (PreparedStatement statement = prepare(sql, args); ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getLong(1) : null;
            }
        });
    }

    private static <T> T runAgainIfVictim(Statement<T> statement) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return statement.run();
            }
            catch (SQLException ex) {
                if (attempt == VICTIM_ATTEMPTS || !rolledBackAsVictim(ex)) {
                    throw ex;
                }
            }
        }
    }

    /** Deadlock or serialization failure (PostgreSQL's deadlock has a code of its own), in the cause chain. */
    private static boolean rolledBackAsVictim(SQLException ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof SQLException failure
                    && ("40001".equals(failure.getSQLState()) || "40P01".equals(failure.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    /** Whether a statement failed with the kind of failure Spring names {@code kind}. */
    boolean failedWith(Class<? extends DataAccessException> kind, String task, String sql, SQLException ex) {
        return kind.isInstance(calls.translate(task, sql, ex));
    }

    private PreparedStatement prepare(String sql, Object... args) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        try {
            statement.setQueryTimeout(timeoutSeconds);
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            return statement;
        }
        catch (SQLException ex) {
            statement.close();
            throw ex;
        }
    }
}
