package dev.lease.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * The JDBC backend ({@code lease.jdbc.*}): leases fenced by a token column, expiry decided by the database clock. See
 * {@link JdbcLeaseConfiguration}.
 */
@ConfigurationProperties("lease.jdbc")
public class JdbcLeaseProperties {

    /** Table holding one row per lease name; a plain SQL identifier, optionally schema-qualified. */
    private String table = "lease_lock";

    /** When to create the lease table: embedded (only for embedded databases), always or never. */
    private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

    /**
     * Where fencing tokens come from: per-name (each row counts its own grants; rows are never deleted) or shared
     * (one counter row of the table for every name, one more statement per grant, and idle rows may be deleted).
     * Switching per-name to shared keeps every name's tokens rising (the counter starts above the table's highest
     * token); switching back is safe only while no row was deleted.
     */
    private JdbcLeaseBackend.Tokens token = JdbcLeaseBackend.Tokens.PER_NAME;

    /**
     * How long a lease row must have been free (released or expired) before it is deleted; unset (the default)
     * keeps every row. Needs lease.jdbc.token: shared.
     */
    private @Nullable Duration deleteIdleAfter;

    /** A connection pool of the lease backend's own; unused unless its url is set. */
    private final Datasource datasource = new Datasource();

    /** JDBC settings with their defaults. */
    public JdbcLeaseProperties() {
    }

    public String getTable() {
        return table;
    }

    public void setTable(String table) {
        this.table = table;
    }

    public DatabaseInitializationMode getInitializeSchema() {
        return initializeSchema;
    }

    public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
        this.initializeSchema = initializeSchema;
    }

    public JdbcLeaseBackend.Tokens getToken() {
        return token;
    }

    public void setToken(JdbcLeaseBackend.Tokens token) {
        this.token = token;
    }

    public @Nullable Duration getDeleteIdleAfter() {
        return deleteIdleAfter;
    }

    public void setDeleteIdleAfter(@Nullable Duration deleteIdleAfter) {
        this.deleteIdleAfter = deleteIdleAfter;
    }

    public Datasource getDatasource() {
        return datasource;
    }

    /**
     * A connection pool of the lease backend's own ({@code lease.jdbc.datasource.*}). Lease bookkeeping (grants,
     * renewals, releases) borrows from the application's DataSource by default, so an exhausted application pool
     * delays renewals until leases are lost; with {@code lease.jdbc.datasource.url} set, it runs on a small HikariCP
     * pool of its own instead. The lease table must then live in that database; the resource-side fence keeps writing
     * through the application's DataSource, inside its transactions.
     */
    public static class Datasource {

        /** JDBC URL of the lease backend's own pool; unset (the default) to use the application's DataSource. */
        private @Nullable String url;

        /** Login user of the lease backend's own pool. */
        private @Nullable String username;

        /** Login password of the lease backend's own pool. */
        private @Nullable String password;

        /** Driver class of the lease backend's own pool; unset to let HikariCP derive it from the url. */
        private @Nullable String driverClassName;

        /**
         * Most connections the lease backend's own pool opens: one renewal batch, a release and a few grants at
         * a time need no more.
         */
        private int maximumPoolSize = 4;

        /** Pool settings with their defaults (no pool of its own). */
        public Datasource() {
        }

        public @Nullable String getUrl() {
            return url;
        }

        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        public @Nullable String getUsername() {
            return username;
        }

        public void setUsername(@Nullable String username) {
            this.username = username;
        }

        public @Nullable String getPassword() {
            return password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        public @Nullable String getDriverClassName() {
            return driverClassName;
        }

        public void setDriverClassName(@Nullable String driverClassName) {
            this.driverClassName = driverClassName;
        }

        public int getMaximumPoolSize() {
            return maximumPoolSize;
        }

        public void setMaximumPoolSize(int maximumPoolSize) {
            this.maximumPoolSize = maximumPoolSize;
        }
    }
}
