package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.lease.redis.RedisLeaseBackend;
import dev.lease.redis.RedlockLeaseBackend;

/**
 * Configuration of the Redlock backend ({@code lease.backend: redlock} or {@code lease.efficiency-backend: redlock}),
 * under {@code lease.redlock.*}: EFFICIENCY leases across independent Redis masters. See docs/redlock.md.
 */
@ConfigurationProperties("lease.redlock")
public class RedlockProperties {

    /**
     * The independent Redis masters, as comma-separated redis:// (or rediss://) URIs, which may carry a user,
     * password and database (redis://user:password@host:6379/0). An odd number, at least 3. Passwords are never
     * printed.
     */
    private List<String> nodes = new ArrayList<>();

    /**
     * The share of each lease's ttl set aside for the nodes' clocks drifting apart: a grant is relied on for
     * ttl - (ttl × factor + 2 ms), counted from before the request.
     */
    private double clockDriftFactor = RedlockLeaseBackend.DEFAULT_CLOCK_DRIFT_FACTOR;

    /**
     * How long each node is waited for per call (grant, renewal, release). Unset: 5 % of the lease's ttl, at least
     * 10 ms.
     */
    private @Nullable Duration nodeTimeout;

    /** Prefix of every lease key on every node. */
    private String keyPrefix = RedisLeaseBackend.DEFAULT_KEY_PREFIX;

    /** How long connecting to a node may take (at startup, and on each reconnect). */
    private Duration connectTimeout = Duration.ofSeconds(2);

    /** Settings with their defaults, to be bound from {@code lease.redlock.*}. */
    public RedlockProperties() {
    }

    public List<String> getNodes() {
        return nodes;
    }

    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    public double getClockDriftFactor() {
        return clockDriftFactor;
    }

    public void setClockDriftFactor(double clockDriftFactor) {
        this.clockDriftFactor = clockDriftFactor;
    }

    public @Nullable Duration getNodeTimeout() {
        return nodeTimeout;
    }

    public void setNodeTimeout(@Nullable Duration nodeTimeout) {
        this.nodeTimeout = nodeTimeout;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }
}
