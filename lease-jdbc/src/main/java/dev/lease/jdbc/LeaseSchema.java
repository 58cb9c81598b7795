package dev.lease.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.InvalidDataAccessResourceUsageException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.ResultSetExtractor;

import dev.lease.sql.SqlDialect;

/**
 * The lease table as a table: created from the shipped DDL ({@code dev/lease/jdbc/schema-<platform>.sql}, with
 * {@code index-<platform>.sql} when idle rows are deleted), verified at startup, probed by the health check, and the
 * width of its {@code name} column, which bounds the lease names it can hold.
 */
final class LeaseSchema {

    // The backend's own category, as before the backend was split: logging configurations name it.
    private static final Log log = LogFactory.getLog(JdbcLeaseBackend.class);

    private final Autocommit calls;
    private final String table;
    private final JdbcTemplate jdbc;
    private final Supplier<SqlDialect> dialect;
    private final boolean expiryIndex;

    /**
     * How many characters the table's {@code name} column holds, once read ({@link #verify}, else the first grant);
     * 0 while unknown.
     */
    private volatile int nameColumnLength;

    /**
     * @param calls the table and the calls on it
     * @param dialect the database's dialect, asked for only when a statement needs it
     * @param expiryIndex whether idle rows are deleted, which finds them by an index on {@code expires_at}
     */
    LeaseSchema(Autocommit calls, Supplier<SqlDialect> dialect, boolean expiryIndex) {
        this.calls = calls;
        this.table = calls.table();
        this.jdbc = calls.jdbc();
        this.dialect = dialect;
        this.expiryIndex = expiryIndex;
    }

    /** Creates the lease table, and the index idle rows are found by if they are deleted, unless they exist. */
    void create() {
        SqlDialect d = dialect.get();
        String script = d.script("dev/lease/jdbc/schema");
        String ddl = SqlDialect.readStatement(script).replace("${table}", table);
        jdbc.execute(ddl);
        if (expiryIndex) {
            createExpiryIndex(d);
        }
        log.info("Lease table " + table + " is ready (" + script + ")");
    }

    /**
     * The index the deletion of idle rows finds them by; H2 names an index within the table's schema, PostgreSQL and
     * MySQL take the bare name and put it there themselves.
     */
    private void createExpiryIndex(SqlDialect d) {
        String bare = table.substring(table.lastIndexOf('.') + 1);
        String index = (d == SqlDialect.H2 ? table : bare) + "_expires_at";
        String ddl = SqlDialect.readStatement(d.script("dev/lease/jdbc/index"))
                .replace("${index}", index).replace("${table}", table);
        try {
            jdbc.execute(ddl);
        }
        catch (DataAccessException ex) {
            // MySQL's "Duplicate key name": the index exists already.
            if (!(ex.getMostSpecificCause() instanceof SQLException sql && sql.getErrorCode() == 1061)) {
                throw ex;
            }
        }
    }

    /** As {@link JdbcLeaseBackend#verifySchema}; also reads the width of the {@code name} column. */
    void verify() {
        String expiresAtType = jdbc.query("SELECT name, owner, token, expires_at FROM " + table + " WHERE 1 = 0",
                (ResultSetExtractor<String>) rows -> {
                    nameColumnLength = lengthOrUnbounded(rows.getMetaData().getPrecision(1));
                    return rows.getMetaData().getColumnTypeName(4);
                });
        if (dialect.get() == SqlDialect.MYSQL && "TIMESTAMP".equalsIgnoreCase(expiresAtType)) {
            throw new InvalidDataAccessResourceUsageException(table + ".expires_at is a TIMESTAMP, which MySQL and "
                    + "MariaDB convert through the session time zone, so around a daylight saving change a lease would "
                    + "be stored an hour off; the lease SQL writes UTC into a DATETIME(6). Convert it while no lease is "
                    + "held, on a UTC session: SET time_zone = '+00:00'; ALTER TABLE " + table
                    + " MODIFY expires_at DATETIME(6) NOT NULL");
        }
    }

    /**
     * Before a grant writes: when {@link #verify} did not run, reads the {@code name} column's width on the grant's
     * own connection, once, and checks {@code name} against it.
     */
    void checkNameBeforeFirstWrite(Call call, String name) throws SQLException {
        if (nameColumnLength == 0) {
            nameColumnLength = lengthOrUnbounded(call.precisionOfFirstColumn(
                    "SELECT name FROM " + table + " WHERE 1 = 0"));
            validateName(name);
        }
    }

    /** As {@link JdbcLeaseBackend#validateName}: refuses nothing until the column's width is known. */
    void validateName(String name) {
        int max = nameColumnLength;
        if (max == 0) {
            return;
        }
        int length = name.codePointCount(0, name.length());
        if (length > max) {
            throw new IllegalArgumentException("Invalid lease name '" + name + "' for the jdbc backend: it is " + length
                    + " characters long, and the name column of the lease table " + table + " holds at most " + max
                    + ". Use a shorter lease name, or widen " + table + ".name (the shipped DDL makes it VARCHAR(255))");
        }
    }

    /** As {@link JdbcLeaseBackend#checkHealth}. */
    Map<String, Object> checkHealth(Duration timeout) {
        String probe = "SELECT name, owner, token, expires_at FROM " + table + " WHERE 1 = 0";
        try {
            calls.run("health check", Math.max(1, timeout.toMillis()), call -> call.queryForLong(probe));
        }
        catch (DataAccessException ex) {
            throw new IllegalStateException("The lease table " + table + " cannot be read: " + ex.getMessage(), ex);
        }
        return Map.of("table", table);
    }

    /** A column's precision as the driver reports it; 0 (not reported) counts as unbounded. */
    private static int lengthOrUnbounded(int precision) {
        return precision > 0 ? precision : Integer.MAX_VALUE;
    }
}
