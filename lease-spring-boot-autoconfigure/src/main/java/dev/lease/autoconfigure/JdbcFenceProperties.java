package dev.lease.autoconfigure;

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

    /** Fence settings with their defaults. */
    public JdbcFenceProperties() {
    }

    public DatabaseInitializationMode getInitializeSchema() {
        return initializeSchema;
    }

    public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
        this.initializeSchema = initializeSchema;
    }
}
