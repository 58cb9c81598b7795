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
 */
record Call(Connection connection, int timeoutSeconds, Autocommit calls) {

    int update(String sql, Object... args) throws SQLException {
        try (PreparedStatement statement = prepare(sql, args)) {
            return statement.executeUpdate();
        }
    }

    /** Runs a statement whatever it returns. */
    boolean execute(String sql, Object... args) throws SQLException {
        try (PreparedStatement statement = prepare(sql, args)) {
            return statement.execute();
        }
    }

    /** The rows a query returns. */
    <T> List<T> query(String sql, RowMapper<T> rows, Object... args) throws SQLException {
        List<T> read = new ArrayList<>();
        try (PreparedStatement statement = prepare(sql, args); ResultSet result = statement.executeQuery()) {
            while (result.next()) {
                read.add(rows.mapRow(result, read.size()));
            }
        }
        return read;
    }

    /** How many characters the first column of a query's result holds, as the driver reports it (0: not reported). */
    int precisionOfFirstColumn(String sql) throws SQLException {
        try (PreparedStatement statement = prepare(sql); ResultSet rows = statement.executeQuery()) {
            return rows.getMetaData().getPrecision(1);
        }
    }

    /** The first column of the first row as a number, or null without a row. */
    Long queryForLong(String sql, Object... args) throws SQLException {
        try (PreparedStatement statement = prepare(sql, args); ResultSet rows = statement.executeQuery()) {
            return rows.next() ? rows.getLong(1) : null;
        }
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
