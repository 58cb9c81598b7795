package dev.lease.sql;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What differs between the databases lease-jdbc supports, for the lease table and for the fence tables alike: which
 * database a product name is, its clock, how to insert a row unless it already exists without failing (a failed
 * statement aborts a PostgreSQL transaction), how to increment a column and read the new value in one statement, how
 * to delete a bounded number of rows, how to bound a lock wait and a transaction's idle time, and which DDL script is
 * its own. Each table's
 * statements are composed from these by their owner ({@code dev.lease.jdbc.LeaseStatements},
 * {@link FenceSql}).
 */
public enum SqlDialect {

    /** PostgreSQL. */
    POSTGRESQL,

    /** MySQL and MariaDB. */
    MYSQL,

    /** H2. */
    H2;

    /**
     * The dialect of a JDBC {@code DatabaseMetaData.getDatabaseProductName()} or an R2DBC driver's name: PostgreSQL,
     * MySQL or MariaDB, H2; empty for anything else, which each caller refuses in its own words.
     */
    public static Optional<SqlDialect> forProductName(String productName) {
        String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return Optional.of(POSTGRESQL);
        }
        if (p.contains("mysql") || p.contains("mariadb")) {
            return Optional.of(MYSQL);
        }
        return p.equals("h2") ? Optional.of(H2) : Optional.empty();
    }

    /** The database's current time. */
    public String now() {
        return switch (this) {
            case POSTGRESQL, H2 -> "CURRENT_TIMESTAMP";
            // UTC into a DATETIME column: CURRENT_TIMESTAMP is session-local time, which a daylight saving change
            // skips or repeats, so a lease computed from it can be stored an hour off or fail to be stored at all.
            case MYSQL -> "UTC_TIMESTAMP(6)";
        };
    }

    /** The database's current time plus one bound number of milliseconds. */
    public String nowPlusMillis() {
        return switch (this) {
            case POSTGRESQL -> "CURRENT_TIMESTAMP + CAST(? AS DOUBLE PRECISION) * INTERVAL '1 millisecond'";
            case MYSQL -> "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))";
            case H2 -> "DATEADD(MILLISECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP)";
        };
    }

    /**
     * The classpath location of this database's version of a script: {@code <prefix>-<platform>.sql}, the platform
     * being {@code postgresql}, {@code mysql} (also MariaDB) or {@code h2}.
     */
    public String script(String prefix) {
        return prefix + "-" + name().toLowerCase(Locale.ROOT) + ".sql";
    }

    /** Reads a one-statement script from the classpath, dropping comment lines and the final semicolon. */
    public static String readStatement(String location) {
        try (InputStream in = SqlDialect.class.getClassLoader().getResourceAsStream(location)) {
            if (in == null) {
                throw new IllegalStateException("Missing schema script " + location);
            }
            String ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(line -> !line.strip().startsWith("--")).collect(Collectors.joining("\n")).strip();
            return ddl.endsWith(";") ? ddl.substring(0, ddl.length() - 1) : ddl;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Inserts one row of {@code values} unless a row with its key exists, without failing on it.
     *
     * @param columns the columns, comma-separated
     * @param values the values of the columns, comma-separated, parameters and SQL expressions
     * @param keyColumn the primary key column
     * @param key how the key is written among {@code values} ({@code ?}, {@code :resource}); with
     *        {@link #insertBindsKeyAgain()} the statement names it once more, last
     */
    public String insertUnlessPresent(String table, String columns, String values, String keyColumn, String key) {
        return switch (this) {
            case POSTGRESQL -> "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ")"
                    + onConflictDoNothing(keyColumn);
            case MYSQL -> "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES (" + values + ")";
            case H2 -> "INSERT INTO " + table + " (" + columns + ") SELECT " + values + " FROM DUAL WHERE "
                    + notExists(table, keyColumn, key);
        };
    }

    /**
     * Like {@link #insertUnlessPresent}, with {@code values} selected from the rows of the same table matching
     * {@code where}, in the same statement (an aggregate of them, so that one row is inserted). {@code where} has no
     * top-level {@code OR}: on H2 the key's check is joined to it with {@code AND}.
     */
    public String insertSelectUnlessPresent(String table, String columns, String values, String where,
            String keyColumn, String key) {
        String select = "SELECT " + values + " FROM " + table + " WHERE " + where;
        return switch (this) {
            case POSTGRESQL -> "INSERT INTO " + table + " (" + columns + ") " + select + onConflictDoNothing(keyColumn);
            case MYSQL -> "INSERT IGNORE INTO " + table + " (" + columns + ") " + select;
            case H2 -> "INSERT INTO " + table + " (" + columns + ") " + select + " AND " + notExists(table, keyColumn,
                    key);
        };
    }

    /**
     * Whether {@link #insertUnlessPresent} and {@link #insertSelectUnlessPresent} name the key once more, after
     * everything else: H2 has no insert that ignores an existing key, so the statement looks for it itself.
     */
    public boolean insertBindsKeyAgain() {
        return this == H2;
    }

    /**
     * Adds one to {@code column} of the rows matching {@code where} and, in the same statement, returns its new value;
     * or, with {@link #readIncremented()}, makes the new value readable by the next statement on the same connection
     * alone. One statement either way: a row locked across a round trip would stall everyone who needs it.
     */
    public String incrementReturning(String table, String column, String where) {
        return switch (this) {
            case POSTGRESQL -> "UPDATE " + table + " SET " + column + " = " + column + " + 1 WHERE " + where
                    + " RETURNING " + column;
            // No UPDATE ... RETURNING: LAST_INSERT_ID(expr) keeps the new value for this connection alone.
            case MYSQL -> "UPDATE " + table + " SET " + column + " = LAST_INSERT_ID(" + column + " + 1) WHERE " + where;
            case H2 -> "SELECT " + column + " FROM FINAL TABLE (UPDATE " + table + " SET " + column + " = " + column
                    + " + 1 WHERE " + where + ")";
        };
    }

    /** Reads what {@link #incrementReturning} left for this connection; null when that statement returns it itself. */
    public String readIncremented() {
        return this == MYSQL ? "SELECT LAST_INSERT_ID()" : null;
    }

    /**
     * Deletes at most a bound number of the rows matching {@code where} (its own parameters bound first, the number
     * last).
     */
    public String deleteAtMost(String table, String keyColumn, String where) {
        return switch (this) {
            // No DELETE ... LIMIT: the rows are picked and locked by the subquery, skipping any a writer holds now.
            case POSTGRESQL -> "DELETE FROM " + table + " WHERE " + keyColumn + " IN (SELECT " + keyColumn + " FROM "
                    + table + " WHERE " + where + " LIMIT ? FOR UPDATE SKIP LOCKED)";
            case MYSQL -> "DELETE FROM " + table + " WHERE " + where + " LIMIT ?";
            case H2 -> "DELETE FROM " + table + " WHERE " + where + " FETCH FIRST ? ROWS ONLY";
        };
    }

    /** Reads how long a statement of this connection waits for a row lock, as {@link #setLockTimeout} takes it. */
    public String readLockTimeout() {
        return switch (this) {
            case POSTGRESQL -> "SELECT current_setting('lock_timeout')";
            case MYSQL -> "SELECT @@SESSION.innodb_lock_wait_timeout";
            case H2 -> "SELECT LOCK_TIMEOUT()";
        };
    }

    /** Sets how long a statement of this connection waits for a row lock (one parameter). */
    public String setLockTimeout() {
        return setLockTimeout("?");
    }

    /**
     * {@link #setLockTimeout()} with its one parameter written as {@code parameter}, such as {@code :timeout} for
     * Spring's R2DBC {@code DatabaseClient}.
     */
    public String setLockTimeout(String parameter) {
        return switch (this) {
            // Local to the transaction: it ends with it, whatever happens to the caller.
            case POSTGRESQL -> "SELECT set_config('lock_timeout', " + parameter + ", true)";
            case MYSQL -> "SET SESSION innodb_lock_wait_timeout = " + parameter;
            case H2 -> "SET LOCK_TIMEOUT " + parameter;
        };
    }

    /** The lock timeout that makes no lock wait last longer than {@code bound}, as {@link #setLockTimeout} takes it. */
    public Object lockTimeout(Duration bound) {
        return switch (this) {
            case POSTGRESQL -> atLeastOneMilli(bound) + "ms";
            // Whole seconds, at least one: InnoDB has no finer bound, and 0 would mean not to wait at all.
            case MYSQL -> Math.max(1, bound.toSeconds());
            case H2 -> atLeastOneMilli(bound);
        };
    }

    /**
     * Reads how long the server waits for the next statement of this connection before ending its session, as
     * {@link #setIdleTimeout()} takes it; null where {@link #setIdleTimeout()} is local to the transaction and needs no
     * setting back (PostgreSQL) or does not exist (H2).
     */
    public String readIdleTimeout() {
        return this == MYSQL ? "SELECT @@SESSION.wait_timeout" : null;
    }

    /**
     * Sets how long the server lets the caller's transaction wait for its next statement before it ends the session,
     * and with it the transaction and its row locks (one parameter, {@link #idleTimeout}); null on H2, which has no
     * such bound.
     */
    public String setIdleTimeout() {
        return setIdleTimeout("?");
    }

    /**
     * {@link #setIdleTimeout()} with its one parameter written as {@code parameter}, such as {@code :timeout} for
     * Spring's R2DBC {@code DatabaseClient}; null on H2.
     */
    public String setIdleTimeout(String parameter) {
        return switch (this) {
            // Local to the transaction, and only while it is idle in it: an idle pooled connection is left alone.
            case POSTGRESQL -> "SELECT set_config('idle_in_transaction_session_timeout', " + parameter + ", true)";
            // A session setting, set back when the transaction ends. wait_timeout rather than MariaDB's
            // idle_write_transaction_timeout: MySQL has only the former.
            case MYSQL -> "SET SESSION wait_timeout = " + parameter;
            case H2 -> null;
        };
    }

    /** The idle timeout of {@link #setIdleTimeout()} that ends a session idle for {@code bound}. */
    public Object idleTimeout(Duration bound) {
        return switch (this) {
            case POSTGRESQL -> atLeastOneMilli(bound) + "ms";
            // Whole seconds, rounded up: a shorter bound than asked would end sessions the caller meant to keep.
            case MYSQL -> Math.max(1, (bound.toMillis() + 999) / 1000);
            case H2 -> atLeastOneMilli(bound);
        };
    }

    /**
     * A session setting as read back ({@link #readLockTimeout()}, {@link #readIdleTimeout()}), in a form every driver
     * binds again: MySQL's unsigned system variables come back as BigInteger, which not every driver binds.
     */
    public static Object settingToBind(Object value) {
        return value instanceof Number number ? Long.valueOf(number.longValue()) : value;
    }

    /** Whether the database ended a statement because its wait for a lock reached the lock timeout. */
    public boolean isLockTimeout(SQLException ex) {
        return isLockTimeout(ex.getSQLState(), ex.getErrorCode());
    }

    /** {@link #isLockTimeout(SQLException)} from an error's SQLSTATE and vendor code, as R2DBC drivers report them. */
    public boolean isLockTimeout(String sqlState, int errorCode) {
        return switch (this) {
            case POSTGRESQL -> "55P03".equals(sqlState);
            case MYSQL -> errorCode == 1205;
            case H2 -> errorCode == 50200;
        };
    }

    private static String onConflictDoNothing(String keyColumn) {
        return " ON CONFLICT (" + keyColumn + ") DO NOTHING";
    }

    private static String notExists(String table, String keyColumn, String key) {
        return "NOT EXISTS (SELECT 1 FROM " + table + " WHERE " + keyColumn + " = " + key + ")";
    }

    /** PostgreSQL and H2 read 0 as no bound at all. */
    private static long atLeastOneMilli(Duration bound) {
        return Math.max(1, bound.toMillis());
    }
}
