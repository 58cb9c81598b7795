package dev.lease.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The Redis backend ({@code lease.redis.*}): efficiency leases only; the connection comes from
 * {@code spring.data.redis.*}. See {@link RedisLeaseConfiguration}.
 */
@ConfigurationProperties("lease.redis")
public class RedisLeaseProperties {

    /** Prefix of every lease key. */
    private String keyPrefix = "lease:";

    /** Redis settings with their defaults. */
    public RedisLeaseProperties() {
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }
}
