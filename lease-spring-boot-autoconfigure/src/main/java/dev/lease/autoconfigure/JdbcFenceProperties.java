package dev.lease.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Resource-side fencing with JdbcFence ({@code lease.fence.*}, table lease_fence). See
 * {@link JdbcFenceAutoConfiguration}.
 */
@ConfigurationProperties("lease.fence")
public class JdbcFenceProperties {

    /** When to create the lease_fence table: embedded (only for embedded databases), always or never. */
    private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

    /**
     * How long a transaction that wrote through the fence may sit idle, waiting for the application's next statement,
     * before the database ends its session (and rolls it back). A holder stopped inside its fenced transaction would
     * otherwise keep the fenced row locked, and every successor waiting, for as long as it stays stopped. Keep it
     * above the longest pause between two statements of a fenced transaction; 0 leaves it to the database. Not on H2.
     */
    private Duration idleTimeout = Duration.ofSeconds(60);

    /** Fence settings with their defaults. */
    public JdbcFenceProperties() {
    }

    public DatabaseInitializationMode getInitializeSchema() {
        return initializeSchema;
    }

    public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
        this.initializeSchema = initializeSchema;
    }

    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = idleTimeout;
    }
}
