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

    /**
     * Where lease bookkeeping (grants, renewals, releases) gets its connections: by default a small pool of its own,
     * so that the application's transactions can never hold every connection it needs.
     */
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
     * Where lease bookkeeping (grants, renewals, releases) gets its connections ({@code lease.jdbc.datasource.*}). By
     * default from a small HikariCP pool of its own, {@code lease-bookkeeping}: built from {@code url},
     * {@code username} and {@code password} when {@code url} is set (the lease table must then live in that
     * database), else a copy of the application's DataSource settings (its HikariCP configuration, or the url, user
     * and password of another pool). So the application's transactions, which each hold a connection of the
     * application's pool while they wait for a lease, can never hold every connection lease bookkeeping needs. An
     * application DataSource that opens a connection per call (no pool to run dry) is used as it is; one that cannot
     * be copied is shared, with one WARN. {@code pool: application} shares the application's DataSource on purpose.
     * The resource-side fence keeps writing through the application's DataSource, inside its transactions.
     */
    public static class Datasource {

        /**
         * Where lease bookkeeping gets its connections: own (the default), a small pool of its own; application, the
         * application's DataSource, whose transactions can then hold every connection a renewal needs.
         */
        private Pool pool = Pool.OWN;

        /**
         * JDBC URL of the lease backend's own pool; unset (the default) to copy the application's DataSource settings.
         */
        private @Nullable String url;

        /** Login user of the lease backend's own pool, with url. */
        private @Nullable String username;

        /** Login password of the lease backend's own pool, with url. */
        private @Nullable String password;

        /** Driver class of the lease backend's own pool, with url; unset to let HikariCP derive it from the url. */
        private @Nullable String driverClassName;

        /**
         * Most connections the lease backend's own pool opens, and keeps open: one renewal batch, a release, a few
         * grants and, on PostgreSQL, the connection that listens for releases need no more.
         */
        private int maximumPoolSize = 4;

        /**
         * Longest wait for a connection of the lease backend's own pool before the grant, renewal or release fails
         * naming the pool (a renewal that fails loses its lease): at least 250ms, HikariCP's minimum, and well below
         * the leases' ttls. Below 1s, a caller that does not wait hears of the pool rather than of a store that did
         * not answer.
         */
        private Duration connectionTimeout = Duration.ofMillis(500);

        /** Pool settings with their defaults (a pool of its own, copied from the application's DataSource). */
        public Datasource() {
        }

        public Pool getPool() {
            return pool;
        }

        public void setPool(Pool pool) {
            this.pool = pool;
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

        public Duration getConnectionTimeout() {
            return connectionTimeout;
        }

        public void setConnectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = connectionTimeout;
        }
    }

    /** Where lease bookkeeping gets its connections ({@code lease.jdbc.datasource.pool}). */
    public enum Pool {

        /**
         * A small pool of its own: from {@code lease.jdbc.datasource.url} when set, else a copy of the application's
         * DataSource settings.
         */
        OWN,

        /**
         * The application's DataSource, shared on purpose (to count every connection in one pool, say): while the
         * application's transactions hold all its connections, grants wait and renewals fail or come too late.
         */
        APPLICATION
    }
}
