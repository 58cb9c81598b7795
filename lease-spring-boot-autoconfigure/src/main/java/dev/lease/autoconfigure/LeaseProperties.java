package dev.lease.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the lease starter, under {@code lease.*}.
 *
 * <p>Backend identifiers are {@code zookeeper}, {@code redis}, {@code jdbc} and {@code in-memory}. A backend is
 * available when its client is on the classpath and configured (a {@code connect-string} or a
 * {@code CuratorFramework} bean, a {@code RedisConnectionFactory}, a {@code DataSource}); the in-memory backend
 * is only available when named explicitly, so that no application ends up on it by accident.
 */
@ConfigurationProperties("lease")
public class LeaseProperties {

    /**
     * Backend serving both lease kinds unless overridden below: zookeeper, redis, jdbc or in-memory. May be omitted
     * when exactly one backend is available.
     */
    private String backend;

    /**
     * Backend serving CORRECTNESS leases, overriding 'lease.backend'. It must issue fencing tokens (zookeeper, jdbc,
     * in-memory); redis is refused at startup.
     */
    private String correctnessBackend;

    /** Backend serving EFFICIENCY leases, overriding 'lease.backend'; any backend will do. */
    private String efficiencyBackend;

    /** Time to live of a lease whose @Leased or LeaseSpec does not set one. */
    private Duration defaultTtl = Duration.ofSeconds(30);

    /**
     * How often leases are renewed when they do not say; must be less than half of every ttl it applies to. Unset
     * means a third of each lease's ttl.
     */
    private Duration renewEvery;

    /**
     * Whether to start anyway, logging a warning, when a lease.* key is set that the starter does not know. By
     * default such a key, usually a misspelt one, fails the startup. Set it when lease.* keys are set outside the
     * application and not meant for the starter, such as the environment variables of a Kubernetes service named
     * 'lease'.
     */
    private boolean ignoreUnknownProperties;

    private final Zookeeper zookeeper = new Zookeeper();

    private final Redis redis = new Redis();

    private final Jdbc jdbc = new Jdbc();

    private final Fence fence = new Fence();

    public String getBackend() {
        return backend;
    }

    public void setBackend(String backend) {
        this.backend = backend;
    }

    public String getCorrectnessBackend() {
        return correctnessBackend;
    }

    public void setCorrectnessBackend(String correctnessBackend) {
        this.correctnessBackend = correctnessBackend;
    }

    public String getEfficiencyBackend() {
        return efficiencyBackend;
    }

    public void setEfficiencyBackend(String efficiencyBackend) {
        this.efficiencyBackend = efficiencyBackend;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    public Duration getRenewEvery() {
        return renewEvery;
    }

    public void setRenewEvery(Duration renewEvery) {
        this.renewEvery = renewEvery;
    }

    public boolean isIgnoreUnknownProperties() {
        return ignoreUnknownProperties;
    }

    public void setIgnoreUnknownProperties(boolean ignoreUnknownProperties) {
        this.ignoreUnknownProperties = ignoreUnknownProperties;
    }

    public Zookeeper getZookeeper() {
        return zookeeper;
    }

    public Redis getRedis() {
        return redis;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Fence getFence() {
        return fence;
    }

    /** ZooKeeper backend: leases fenced by the version of a persistent znode per lease name. */
    public static class Zookeeper {

        /**
         * ZooKeeper ensemble, such as 'zk1:2181,zk2:2181,zk3:2181'. Not needed when the application already has a
         * CuratorFramework bean, which is then reused.
         */
        private String connectString;

        /** Parent znode of all lease znodes; one persistent child per lease name, never deleted by the library. */
        private String root = "/leases";

        /**
         * ZooKeeper session timeout. A lease lives as long as the session, so no lease ttl may exceed the timeout
         * the server negotiates (within its minSessionTimeout and maxSessionTimeout). The default matches
         * lease.default-ttl, so a crashed holder blocks a name for about as long as on any other backend.
         */
        private Duration sessionTimeout = Duration.ofSeconds(30);

        /**
         * How long to wait for the first connection at startup before failing, and the client's connection timeout.
         * It may not exceed the session timeout. Unset means 10 s, or the session timeout if that is shorter. A
         * connection refused by every server fails the startup at once.
         */
        private Duration connectionTimeout;

        public String getConnectString() {
            return connectString;
        }

        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        public String getRoot() {
            return root;
        }

        public void setRoot(String root) {
            this.root = root;
        }

        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        public void setSessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = sessionTimeout;
        }

        public Duration getConnectionTimeout() {
            return connectionTimeout;
        }

        public void setConnectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = connectionTimeout;
        }
    }

    /** Redis backend: efficiency leases only; the connection comes from 'spring.data.redis.*'. */
    public static class Redis {

        /** Prefix of every lease key. */
        private String keyPrefix = "lease:";

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** JDBC backend: leases fenced by a token column, expiry decided by the database clock. */
    public static class Jdbc {

        /** Table holding one row per lease name; a plain SQL identifier, optionally schema-qualified. */
        private String table = "lease_lock";

        /** When to create the lease table: embedded (only for embedded databases), always or never. */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }
    }

    /** Resource-side fencing with JdbcFence (table lease_fence). */
    public static class Fence {

        /** When to create the lease_fence table: embedded (only for embedded databases), always or never. */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }
    }
}
