package dev.lease.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The Actuator health contributor 'lease' ({@code lease.health.*}; one entry per backend in use), turned off with
 * 'management.health.lease.enabled=false'. See {@link LeaseActuatorAutoConfiguration}.
 */
@ConfigurationProperties("lease.health")
public class LeaseHealthProperties {

    /**
     * How long a health check waits for a backend to answer before reporting it DOWN. The check never takes a
     * lease, and a backend that has not answered an earlier check is not asked again until it does.
     */
    private Duration timeout = Duration.ofSeconds(2);

    /** Health settings with their defaults. */
    public LeaseHealthProperties() {
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }
}
