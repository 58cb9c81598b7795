package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
    private Duration nodeTimeout;

    /** Prefix of every lease key on every node. */
    private String keyPrefix = RedisLeaseBackend.DEFAULT_KEY_PREFIX;

    /** How long connecting to a node may take (at startup, and on each reconnect). */
    private Duration connectTimeout = Duration.ofSeconds(2);

    /** Settings with their defaults, to be bound from {@code lease.redlock.*}. */
    public RedlockProperties() {
    }

    /**
     * The nodes' URIs ({@code lease.redlock.nodes}).
     *
     * @return the URIs as configured
     */
    public List<String> getNodes() {
        return nodes;
    }

    /**
     * Sets the nodes' URIs.
     *
     * @param nodes redis:// URIs, an odd number of at least 3
     */
    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    /**
     * The clock drift factor ({@code lease.redlock.clock-drift-factor}).
     *
     * @return the share of the ttl set aside for clock drift
     */
    public double getClockDriftFactor() {
        return clockDriftFactor;
    }

    /**
     * Sets the clock drift factor.
     *
     * @param clockDriftFactor a share of the ttl in [0, 0.5)
     */
    public void setClockDriftFactor(double clockDriftFactor) {
        this.clockDriftFactor = clockDriftFactor;
    }

    /**
     * The per-node timeout ({@code lease.redlock.node-timeout}).
     *
     * @return the timeout, or null for 5 % of each lease's ttl
     */
    public Duration getNodeTimeout() {
        return nodeTimeout;
    }

    /**
     * Sets the per-node timeout.
     *
     * @param nodeTimeout a positive duration, or null for 5 % of each lease's ttl
     */
    public void setNodeTimeout(Duration nodeTimeout) {
        this.nodeTimeout = nodeTimeout;
    }

    /**
     * The key prefix ({@code lease.redlock.key-prefix}).
     *
     * @return the prefix of every lease key
     */
    public String getKeyPrefix() {
        return keyPrefix;
    }

    /**
     * Sets the key prefix.
     *
     * @param keyPrefix a short plain prefix such as {@code lease:}
     */
    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    /**
     * The connect timeout ({@code lease.redlock.connect-timeout}).
     *
     * @return how long connecting to a node may take
     */
    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    /**
     * Sets the connect timeout.
     *
     * @param connectTimeout how long connecting to a node may take
     */
    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }
}
