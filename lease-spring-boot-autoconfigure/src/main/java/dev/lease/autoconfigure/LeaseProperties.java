package dev.lease.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the lease starter, under {@code lease.*}: which backend serves which lease kind, and the defaults of
 * every lease. Each backend's own settings are bound by the configuration that creates it
 * ({@link ZooKeeperLeaseProperties}, {@link RedisLeaseProperties}, {@link RedlockProperties},
 * {@link JdbcLeaseProperties}, {@link KubernetesLeaseProperties}, {@link EtcdLeaseProperties}), as are those of
 * leader elections ({@link LeaderElectionProperties}), the fence table ({@link JdbcFenceProperties}) and the health
 * contributor ({@link LeaseHealthProperties}).
 *
 * <p>Backend identifiers are {@code zookeeper}, {@code redis}, {@code redlock}, {@code jdbc}, {@code kubernetes},
 * {@code etcd} and {@code in-memory}. A backend is available when its client is on the classpath and configured (a
 * {@code connect-string} or a {@code CuratorFramework} bean, a {@code RedisConnectionFactory}, a {@code DataSource});
 * the in-memory and Redlock backends are only available when named explicitly, so that no application ends up on them
 * by accident. Once a {@code lease.*backend} property is set, only the backends named are created.
 */
@ConfigurationProperties("lease")
public class LeaseProperties {

    /**
     * Backend serving both lease kinds unless overridden below: zookeeper, redis, redlock, jdbc, kubernetes, etcd or
     * in-memory. May be omitted when exactly one backend is available.
     */
    private @Nullable String backend;

    /**
     * Backend serving CORRECTNESS leases, overriding 'lease.backend'. It must issue fencing tokens (zookeeper, jdbc,
     * kubernetes on 1.35 or later, etcd, in-memory); redis is refused at startup.
     */
    private @Nullable String correctnessBackend;

    /** Backend serving EFFICIENCY leases, overriding 'lease.backend'; any backend will do. */
    private @Nullable String efficiencyBackend;

    /** Time to live of a lease whose @Leased or LeaseSpec does not set one. */
    private Duration defaultTtl = Duration.ofSeconds(30);

    /**
     * How often leases are renewed when they do not say; must be less than half of every ttl it applies to. Unset
     * means a third of each lease's ttl.
     */
    private @Nullable Duration renewEvery;

    /**
     * Whether to start anyway, logging a warning, when a lease.* key is set in the application's own configuration
     * (its configuration files, command-line arguments, test properties) that the starter does not know. By default
     * such a key, usually a misspelt one, fails the startup. Unknown lease.* keys in system properties and environment
     * variables, which the application does not own (such as those of a Kubernetes service named 'lease'), are only
     * logged in any case.
     */
    private boolean ignoreUnknownProperties;

    /** Settings with their defaults, to be bound from {@code lease.*}. */
    public LeaseProperties() {
    }

    public @Nullable String getBackend() {
        return backend;
    }

    public void setBackend(@Nullable String backend) {
        this.backend = backend;
    }

    public @Nullable String getCorrectnessBackend() {
        return correctnessBackend;
    }

    public void setCorrectnessBackend(@Nullable String correctnessBackend) {
        this.correctnessBackend = correctnessBackend;
    }

    public @Nullable String getEfficiencyBackend() {
        return efficiencyBackend;
    }

    public void setEfficiencyBackend(@Nullable String efficiencyBackend) {
        this.efficiencyBackend = efficiencyBackend;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    public @Nullable Duration getRenewEvery() {
        return renewEvery;
    }

    public void setRenewEvery(@Nullable Duration renewEvery) {
        this.renewEvery = renewEvery;
    }

    public boolean isIgnoreUnknownProperties() {
        return ignoreUnknownProperties;
    }

    public void setIgnoreUnknownProperties(boolean ignoreUnknownProperties) {
        this.ignoreUnknownProperties = ignoreUnknownProperties;
    }
}
