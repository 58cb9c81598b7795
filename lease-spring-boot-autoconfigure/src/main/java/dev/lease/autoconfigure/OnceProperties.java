package dev.lease.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * {@code @Once} keys ({@code lease.once.*}, table lease_once). See {@link OnceAutoConfiguration}.
 */
@ConfigurationProperties("lease.once")
public class OnceProperties {

    /** When to create the lease_once table: embedded (only for embedded databases), always or never. */
    private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

    /**
     * How long keys are kept: a background sweep deletes those recorded longer ago, by the database's clock, and a
     * call with such a key runs again. Keep it longer than any retry of the same work.
     */
    private Duration retention = Duration.ofDays(30);

    /**
     * How long a @Once call outside any leased section waits for another open transaction recording the same key
     * before failing with LeaseUnavailableException; inside one it waits at most the lease's remaining validity.
     */
    private Duration wait = DEFAULT_WAIT;

    static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);

    /** Once settings with their defaults. */
    public OnceProperties() {
    }

    public DatabaseInitializationMode getInitializeSchema() {
        return initializeSchema;
    }

    public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
        this.initializeSchema = initializeSchema;
    }

    public Duration getRetention() {
        return retention;
    }

    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    public Duration getWait() {
        return wait;
    }

    public void setWait(Duration wait) {
        this.wait = wait;
    }
}
