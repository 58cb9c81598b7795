package dev.lease.fence;

import java.sql.SQLException;
import java.time.Duration;

import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.PreparedStatementCallback;

import dev.lease.jdbc.SqlPlatforms;

/**
 * What the fence's SQL says differently per database: inserting a fence row unless it exists without aborting the
 * caller's transaction, and bounding how long a statement of this connection waits for a row lock.
 */
enum FencePlatform {

    POSTGRESQL("postgresql", false,
            // Local to the transaction: it ends with it, whatever happens to this method.
            "SELECT current_setting('lock_timeout')", "SELECT set_config('lock_timeout', ?, true)") {

        @Override
        Object lockTimeout(Duration bound) {
            return atLeastOneMilli(bound) + "ms";
        }

        @Override
        boolean isLockTimeout(SQLException ex) {
            return "55P03".equals(ex.getSQLState());
        }
    },
    MYSQL("mysql", false,
            "SELECT @@SESSION.innodb_lock_wait_timeout", "SET SESSION innodb_lock_wait_timeout = ?") {

        /** Whole seconds, at least one: InnoDB has no finer bound, and 0 would mean not to wait at all. */
        @Override
        Object lockTimeout(Duration bound) {
            return Math.max(1, bound.toSeconds());
        }

        @Override
        boolean isLockTimeout(SQLException ex) {
            return ex.getErrorCode() == 1205;
        }
    },
    H2("h2", true,
            "SELECT LOCK_TIMEOUT()", "SET LOCK_TIMEOUT ?") {

        @Override
        Object lockTimeout(Duration bound) {
            return atLeastOneMilli(bound);
        }

        @Override
        boolean isLockTimeout(SQLException ex) {
            return ex.getErrorCode() == 50200;
        }
    };

    final String script;
    final String insertIfAbsent;
    final boolean insertBindsResourceTwice;
    private final String readLockTimeout;
    private final String setLockTimeout;

    FencePlatform(String script, boolean insertBindsResourceTwice, String readLockTimeout, String setLockTimeout) {
        this.script = script;
        this.insertIfAbsent = FenceSql.positional(FenceSql.insertIfAbsent(script));
        this.insertBindsResourceTwice = insertBindsResourceTwice;
        this.readLockTimeout = readLockTimeout;
        this.setLockTimeout = setLockTimeout;
    }

    static FencePlatform of(String product) {
        String platform = SqlPlatforms.of(product).orElseThrow(() -> new IllegalStateException(
                "JdbcFence supports PostgreSQL, MySQL, MariaDB and H2, but the database is '" + product
                        + "'. Check tokens with a fence column in your own table instead (JdbcFence.table)."));
        for (FencePlatform p : values()) {
            if (p.script.equals(platform)) {
                return p;
            }
        }
        throw new IllegalStateException("No fence platform for " + platform);
    }

    /** The lock timeout of the connection the caller's transaction runs on, as {@link #setLockTimeout} takes it. */
    Object readLockTimeout(JdbcOperations jdbc) {
        Object value = jdbc.queryForObject(readLockTimeout, Object.class);
        // MySQL's unsigned system variables come back as BigInteger, which not every driver binds.
        return value instanceof Number number ? Long.valueOf(number.longValue()) : value;
    }

    /** Sets the lock timeout of the connection the caller's transaction runs on, to {@code value}. */
    void setLockTimeout(JdbcOperations jdbc, Object value) {
        jdbc.execute(setLockTimeout, (PreparedStatementCallback<Boolean>) statement -> {
            statement.setObject(1, value);
            return statement.execute();
        });
    }

    /** The lock timeout that makes no lock wait last longer than {@code bound}, as {@link #setLockTimeout} takes it. */
    abstract Object lockTimeout(Duration bound);

    /** Whether the database ended a statement because its wait for a lock reached the lock timeout. */
    abstract boolean isLockTimeout(SQLException ex);

    /** PostgreSQL and H2 read 0 as no bound at all. */
    private static long atLeastOneMilli(Duration bound) {
        return Math.max(1, bound.toMillis());
    }
}
