package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.lease.LeaseKind;

/**
 * Configuration of the lease starter, under {@code lease.*}.
 *
 * <p>Backend identifiers are {@code zookeeper}, {@code redis}, {@code jdbc}, {@code kubernetes}, {@code etcd} and {@code in-memory}. A backend is
 * available when its client is on the classpath and configured (a {@code connect-string} or a
 * {@code CuratorFramework} bean, a {@code RedisConnectionFactory}, a {@code DataSource}); the in-memory backend
 * is only available when named explicitly, so that no application ends up on it by accident. Once a
 * {@code lease.*backend} property is set, only the backends named are created.
 */
@ConfigurationProperties("lease")
public class LeaseProperties {

    /**
     * Backend serving both lease kinds unless overridden below: zookeeper, redis, jdbc, kubernetes, etcd or in-memory. May be omitted
     * when exactly one backend is available.
     */
    private String backend;

    /**
     * Backend serving CORRECTNESS leases, overriding 'lease.backend'. It must issue fencing tokens (zookeeper, jdbc,
     * kubernetes on 1.35 or later, etcd, in-memory); redis is refused at startup.
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

    private final Kubernetes kubernetes = new Kubernetes();

    private final Etcd etcd = new Etcd();

    private final Jdbc jdbc = new Jdbc();

    private final Fence fence = new Fence();

    private final Health health = new Health();

    private final Leader leader = new Leader();

    /** Settings with their defaults, to be bound from {@code lease.*}. */
    public LeaseProperties() {
    }

    /**
     * The backend serving both lease kinds unless overridden ({@code lease.backend}).
     *
     * @return a backend identifier, or null to pick the only available one
     */
    public String getBackend() {
        return backend;
    }

    /**
     * Sets the backend serving both lease kinds unless overridden ({@code lease.backend}).
     *
     * @param backend a backend identifier, or null to pick the only available one
     */
    public void setBackend(String backend) {
        this.backend = backend;
    }

    /**
     * The backend serving {@code CORRECTNESS} leases, overriding {@code lease.backend}
     * ({@code lease.correctness-backend}).
     *
     * @return a backend that issues fencing tokens, or null
     */
    public String getCorrectnessBackend() {
        return correctnessBackend;
    }

    /**
     * Sets the backend serving {@code CORRECTNESS} leases, overriding {@code lease.backend}
     * ({@code lease.correctness-backend}).
     *
     * @param correctnessBackend a backend that issues fencing tokens, or null
     */
    public void setCorrectnessBackend(String correctnessBackend) {
        this.correctnessBackend = correctnessBackend;
    }

    /**
     * The backend serving {@code EFFICIENCY} leases, overriding {@code lease.backend}
     * ({@code lease.efficiency-backend}).
     *
     * @return any backend identifier, or null
     */
    public String getEfficiencyBackend() {
        return efficiencyBackend;
    }

    /**
     * Sets the backend serving {@code EFFICIENCY} leases, overriding {@code lease.backend}
     * ({@code lease.efficiency-backend}).
     *
     * @param efficiencyBackend any backend identifier, or null
     */
    public void setEfficiencyBackend(String efficiencyBackend) {
        this.efficiencyBackend = efficiencyBackend;
    }

    /**
     * The time to live of a lease that does not set one ({@code lease.default-ttl}).
     *
     * @return the default ttl
     */
    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    /**
     * Sets the time to live of a lease that does not set one ({@code lease.default-ttl}).
     *
     * @param defaultTtl the default ttl
     */
    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    /**
     * The renewal interval of a lease that does not set one ({@code lease.renew-every}).
     *
     * @return the default renewal interval, or null for a third of each lease's ttl
     */
    public Duration getRenewEvery() {
        return renewEvery;
    }

    /**
     * Sets the renewal interval of a lease that does not set one ({@code lease.renew-every}).
     *
     * @param renewEvery the default renewal interval, or null for a third of each lease's ttl
     */
    public void setRenewEvery(Duration renewEvery) {
        this.renewEvery = renewEvery;
    }

    /**
     * Whether unknown {@code lease.*} keys are only logged instead of failing the startup
     * ({@code lease.ignore-unknown-properties}).
     *
     * @return true to only log unknown keys
     */
    public boolean isIgnoreUnknownProperties() {
        return ignoreUnknownProperties;
    }

    /**
     * Sets whether unknown {@code lease.*} keys are only logged instead of failing the startup
     * ({@code lease.ignore-unknown-properties}).
     *
     * @param ignoreUnknownProperties true to only log unknown keys
     */
    public void setIgnoreUnknownProperties(boolean ignoreUnknownProperties) {
        this.ignoreUnknownProperties = ignoreUnknownProperties;
    }

    /**
     * The ZooKeeper backend settings ({@code lease.zookeeper.*}).
     *
     * @return the settings, never null
     */
    public Zookeeper getZookeeper() {
        return zookeeper;
    }

    /**
     * The Redis backend settings ({@code lease.redis.*}).
     *
     * @return the settings, never null
     */
    public Redis getRedis() {
        return redis;
    }

    /**
     * The Kubernetes backend settings ({@code lease.kubernetes.*}).
     *
     * @return the settings, never null
     */
    public Kubernetes getKubernetes() {
        return kubernetes;
    }

    /**
     * The etcd backend settings ({@code lease.etcd.*}).
     *
     * @return the settings, never null
     */
    public Etcd getEtcd() {
        return etcd;
    }

    /**
     * The JDBC backend settings ({@code lease.jdbc.*}).
     *
     * @return the settings, never null
     */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /**
     * The {@code JdbcFence} settings ({@code lease.fence.*}).
     *
     * @return the settings, never null
     */
    public Fence getFence() {
        return fence;
    }

    /**
     * The Actuator health contributor settings ({@code lease.health.*}).
     *
     * @return the settings, never null
     */
    public Health getHealth() {
        return health;
    }

    /**
     * The leader election settings ({@code lease.leader.*}).
     *
     * @return the settings, never null
     */
    public Leader getLeader() {
        return leader;
    }

    /** ZooKeeper backend: leases fenced by the version of a persistent znode per lease name, or by zxids. */
    public static class Zookeeper {

        /**
         * ZooKeeper ensemble, such as 'zk1:2181,zk2:2181,zk3:2181'. Not needed when the application already has a
         * CuratorFramework bean, which is then reused.
         */
        private String connectString;

        /**
         * Parent znode of all lease znodes; one persistent child per lease name, deleted by the library only when
         * idle and lease.zookeeper.delete-idle-after is set.
         */
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

        /**
         * Where fencing tokens come from: 'version' (the version of the name's persistent znode; idle names' znodes
         * are then kept for ever, because a re-created znode starts again at version 0) or 'zxid' (the zxid of the
         * granting write: rises ensemble-wide, also across deletion and re-creation, so idle names may be deleted).
         * Switching from version to zxid keeps tokens rising; never switch back on names whose tokens guard resources.
         * All instances using a name must use the same value: a version instance refuses names zxid grants used.
         * Switch with all instances stopped.
         */
        private TokenSource token = TokenSource.VERSION;

        /**
         * Delete the znode of a lease name nobody held, and that did not change, for this long, so that per-entity
         * names (such as 'invoice-42') do not pile up in ZooKeeper. Only allowed with lease.zookeeper.token=zxid.
         * Unset (the default) keeps idle names for ever.
         */
        private Duration deleteIdleAfter;

        /**
         * The identity the client authenticates with. With it, every znode the library creates is creator-only, so
         * no other client of the ensemble can delete holders or counters; without it, they are world-writable.
         */
        private final Authorization authorization = new Authorization();

        /** ZooKeeper settings with their defaults. */
        public Zookeeper() {
        }

        /**
         * The identity the client authenticates with ({@code lease.zookeeper.authorization.*}).
         *
         * @return the authorization settings, never null
         */
        public Authorization getAuthorization() {
            return authorization;
        }

        /**
         * The ZooKeeper ensemble to connect to when the application has no {@code CuratorFramework} bean
         * ({@code lease.zookeeper.connect-string}).
         *
         * @return the connect string, such as {@code zk1:2181,zk2:2181,zk3:2181}, or null
         */
        public String getConnectString() {
            return connectString;
        }

        /**
         * Sets the ZooKeeper ensemble to connect to when the application has no {@code CuratorFramework} bean
         * ({@code lease.zookeeper.connect-string}).
         *
         * @param connectString the connect string, such as {@code zk1:2181,zk2:2181,zk3:2181}, or null
         */
        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        /**
         * The parent znode of all lease znodes ({@code lease.zookeeper.root}).
         *
         * @return an absolute path without trailing slash
         */
        public String getRoot() {
            return root;
        }

        /**
         * Sets the parent znode of all lease znodes ({@code lease.zookeeper.root}).
         *
         * @param root an absolute path without trailing slash
         */
        public void setRoot(String root) {
            this.root = root;
        }

        /**
         * The ZooKeeper session timeout, which bounds every lease ttl ({@code lease.zookeeper.session-timeout}).
         *
         * @return the session timeout
         */
        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        /**
         * Sets the ZooKeeper session timeout, which bounds every lease ttl ({@code lease.zookeeper.session-timeout}).
         *
         * @param sessionTimeout the session timeout
         */
        public void setSessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = sessionTimeout;
        }

        /**
         * How long to wait for the first connection at startup, and the client's connection timeout
         * ({@code lease.zookeeper.connection-timeout}).
         *
         * @return the connection timeout, or null for 10 s or the session timeout if shorter
         */
        public Duration getConnectionTimeout() {
            return connectionTimeout;
        }

        /**
         * Sets how long to wait for the first connection at startup, and the client's connection timeout
         * ({@code lease.zookeeper.connection-timeout}).
         *
         * @param connectionTimeout the connection timeout, or null for 10 s or the session timeout if shorter
         */
        public void setConnectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = connectionTimeout;
        }

        /**
         * Where fencing tokens come from ({@code lease.zookeeper.token}).
         *
         * @return the token source, {@link TokenSource#VERSION} by default
         */
        public TokenSource getToken() {
            return token;
        }

        /**
         * Sets where fencing tokens come from ({@code lease.zookeeper.token}).
         *
         * @param token the token source
         */
        public void setToken(TokenSource token) {
            this.token = token;
        }

        /**
         * How long a lease name must stay unheld and unchanged before its znode is deleted
         * ({@code lease.zookeeper.delete-idle-after}).
         *
         * @return the idle time, or null to keep idle names for ever
         */
        public Duration getDeleteIdleAfter() {
            return deleteIdleAfter;
        }

        /**
         * Sets how long a lease name must stay unheld and unchanged before its znode is deleted
         * ({@code lease.zookeeper.delete-idle-after}); only allowed with {@code lease.zookeeper.token=zxid}.
         *
         * @param deleteIdleAfter the idle time, or null to keep idle names for ever
         */
        public void setDeleteIdleAfter(Duration deleteIdleAfter) {
            this.deleteIdleAfter = deleteIdleAfter;
        }

        /**
         * The identity the ZooKeeper client authenticates with ({@code lease.zookeeper.authorization.*}), such as
         * scheme {@code digest} with credentials {@code leases:secret}, or {@code sasl}. Set both or neither.
         */
        public static class Authorization {

            /** Authentication scheme, such as 'digest' (credentials 'user:password') or 'sasl'. */
            private String scheme;

            /** The credentials for the scheme, such as 'leases:secret' for digest. Never logged. */
            private String credentials;

            /** No authorization. */
            public Authorization() {
            }

            /**
             * The authentication scheme ({@code lease.zookeeper.authorization.scheme}).
             *
             * @return the scheme, such as {@code digest}, or null
             */
            public String getScheme() {
                return scheme;
            }

            /**
             * Sets the authentication scheme ({@code lease.zookeeper.authorization.scheme}).
             *
             * @param scheme the scheme, such as {@code digest}, or null
             */
            public void setScheme(String scheme) {
                this.scheme = scheme;
            }

            /**
             * The credentials for the scheme ({@code lease.zookeeper.authorization.credentials}).
             *
             * @return the credentials, such as {@code leases:secret}, or null
             */
            public String getCredentials() {
                return credentials;
            }

            /**
             * Sets the credentials for the scheme ({@code lease.zookeeper.authorization.credentials}).
             *
             * @param credentials the credentials, such as {@code leases:secret}, or null
             */
            public void setCredentials(String credentials) {
                this.credentials = credentials;
            }

            /** A masked form: the credentials never reach a log line or an error report. */
            @Override
            public String toString() {
                return "Authorization[scheme=" + scheme + ", credentials=" + (credentials == null ? null : "***") + "]";
            }
        }

        /** Where the ZooKeeper backend takes its fencing tokens from ({@code lease.zookeeper.token}). */
        public enum TokenSource {

            /**
             * The version of the name's persistent znode, bumped by every grant. Idle names are kept, since a
             * re-created znode would start again at version 0.
             */
            VERSION,

            /**
             * The zxid of the granting write: rises across deletion and re-creation of a name's znode, so idle
             * names may be deleted (lease.zookeeper.delete-idle-after).
             */
            ZXID
        }
    }

    /** Redis backend: efficiency leases only; the connection comes from 'spring.data.redis.*'. */
    public static class Redis {

        /** Prefix of every lease key. */
        private String keyPrefix = "lease:";

        /** Redis settings with their defaults. */
        public Redis() {
        }

        /**
         * The prefix of every lease key ({@code lease.redis.key-prefix}).
         *
         * @return the key prefix
         */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /**
         * Sets the prefix of every lease key ({@code lease.redis.key-prefix}).
         *
         * @param keyPrefix the key prefix
         */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /**
     * Kubernetes backend: one coordination.k8s.io/v1 Lease object per lease name; fenced by resourceVersion on
     * Kubernetes 1.35 and later. The client is the application's KubernetesClient bean, else one built from the
     * in-cluster service account or the kubeconfig.
     */
    public static class Kubernetes {

        /** Namespace of the Lease objects. Unset means the client's namespace (the pod's own in a cluster), else 'default'. */
        private String namespace;

        /**
         * Prepended to a lease name to form its Lease object name; the result must be a valid Kubernetes object name
         * (lower-case letters, digits, '-' and '.').
         */
        private String namePrefix = "lease-";

        /**
         * Written as holderIdentity of the Leases this instance holds, for people reading them; unique per instance.
         * Unset means the host name (the pod name in a cluster) plus a random suffix.
         */
        private String holderIdentity;

        /** Kubernetes settings with their defaults. */
        public Kubernetes() {
        }

        /**
         * The namespace of the Lease objects ({@code lease.kubernetes.namespace}).
         *
         * @return the namespace, or null for the client's namespace
         */
        public String getNamespace() {
            return namespace;
        }

        /**
         * Sets the namespace of the Lease objects ({@code lease.kubernetes.namespace}).
         *
         * @param namespace the namespace, or null for the client's namespace
         */
        public void setNamespace(String namespace) {
            this.namespace = namespace;
        }

        /**
         * The prefix of every Lease object name ({@code lease.kubernetes.name-prefix}).
         *
         * @return the prefix
         */
        public String getNamePrefix() {
            return namePrefix;
        }

        /**
         * Sets the prefix of every Lease object name ({@code lease.kubernetes.name-prefix}).
         *
         * @param namePrefix the prefix
         */
        public void setNamePrefix(String namePrefix) {
            this.namePrefix = namePrefix;
        }

        /**
         * The holder identity written into held Leases ({@code lease.kubernetes.holder-identity}).
         *
         * @return the identity, or null for host name plus a random suffix
         */
        public String getHolderIdentity() {
            return holderIdentity;
        }

        /**
         * Sets the holder identity written into held Leases ({@code lease.kubernetes.holder-identity}).
         *
         * @param holderIdentity the identity, or null for host name plus a random suffix
         */
        public void setHolderIdentity(String holderIdentity) {
            this.holderIdentity = holderIdentity;
        }
    }

    /** JDBC backend: leases fenced by a token column, expiry decided by the database clock. */
    public static class Jdbc {

        /** Table holding one row per lease name; a plain SQL identifier, optionally schema-qualified. */
        private String table = "lease_lock";

        /** When to create the lease table: embedded (only for embedded databases), always or never. */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        /** A connection pool of the lease backend's own; unused unless its url is set. */
        private final Datasource datasource = new Datasource();

        /**
         * Where fencing tokens come from: per-name (each row counts its own grants; rows are never deleted) or shared
         * (one counter row of the table for every name, one more statement per grant, and idle rows may be deleted).
         */
        private Token token = Token.PER_NAME;

        /**
         * How long a lease row must have been free (released or expired) before it is deleted; unset (the default)
         * keeps every row. Needs lease.jdbc.token: shared.
         */
        private Duration deleteIdleAfter;

        /** JDBC settings with their defaults. */
        public Jdbc() {
        }

        /**
         * The table holding one row per lease name ({@code lease.jdbc.table}).
         *
         * @return a plain SQL identifier, optionally schema-qualified
         */
        public String getTable() {
            return table;
        }

        /**
         * Sets the table holding one row per lease name ({@code lease.jdbc.table}).
         *
         * @param table a plain SQL identifier, optionally schema-qualified
         */
        public void setTable(String table) {
            this.table = table;
        }

        /**
         * When to create the lease table ({@code lease.jdbc.initialize-schema}).
         *
         * @return embedded (the default), always or never
         */
        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        /**
         * Sets when to create the lease table ({@code lease.jdbc.initialize-schema}).
         *
         * @param initializeSchema embedded (the default), always or never
         */
        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        /**
         * Where fencing tokens come from ({@code lease.jdbc.token}).
         *
         * @return per-name (the default) or shared
         */
        public Token getToken() {
            return token;
        }

        /**
         * Sets where fencing tokens come from ({@code lease.jdbc.token}). Switching per-name to shared keeps every
         * name's tokens rising (the counter starts above the table's highest token); switching back is safe only
         * while no row was deleted, so turn {@code delete-idle-after} off first and never go back after a deletion.
         *
         * @param token per-name or shared
         */
        public void setToken(Token token) {
            this.token = token;
        }

        /**
         * How long a lease row must have been free before it is deleted ({@code lease.jdbc.delete-idle-after}).
         *
         * @return the duration, or null to keep every row (the default)
         */
        public Duration getDeleteIdleAfter() {
            return deleteIdleAfter;
        }

        /**
         * Sets how long a lease row must have been free before it is deleted ({@code lease.jdbc.delete-idle-after});
         * needs {@code lease.jdbc.token: shared} on every instance.
         *
         * @param deleteIdleAfter a positive duration, or null to keep every row
         */
        public void setDeleteIdleAfter(Duration deleteIdleAfter) {
            this.deleteIdleAfter = deleteIdleAfter;
        }

        /** Where the JDBC backend's fencing tokens come from ({@code lease.jdbc.token}). */
        public enum Token {

            /** Each name's row counts its own grants; rows are never deleted (the default). */
            PER_NAME,

            /** One counter row of the lease table for every name, so that idle rows may be deleted. */
            SHARED
        }

        /**
         * A connection pool of the lease backend's own ({@code lease.jdbc.datasource.*}); unused unless its url is
         * set.
         *
         * @return the pool settings
         */
        public Datasource getDatasource() {
            return datasource;
        }

        /**
         * A connection pool of the lease backend's own ({@code lease.jdbc.datasource.*}). Lease bookkeeping
         * (grants, renewals, releases) borrows from the application's DataSource by default, so an exhausted
         * application pool delays renewals until leases are lost; with {@code lease.jdbc.datasource.url} set, it
         * runs on a small HikariCP pool of its own instead. The lease table must then live in that database; the
         * resource-side fence keeps writing through the application's DataSource, inside its transactions.
         */
        public static class Datasource {

            /** JDBC URL of the lease backend's own pool; unset (the default) to use the application's DataSource. */
            private String url;

            /** Login user of the lease backend's own pool. */
            private String username;

            /** Login password of the lease backend's own pool. */
            private String password;

            /** Driver class of the lease backend's own pool; unset to let HikariCP derive it from the url. */
            private String driverClassName;

            /**
             * Most connections the lease backend's own pool opens: one renewal batch, a release and a few grants at
             * a time need no more.
             */
            private int maximumPoolSize = 4;

            /** Pool settings with their defaults (no pool of its own). */
            public Datasource() {
            }

            /**
             * The JDBC URL of the lease backend's own pool ({@code lease.jdbc.datasource.url}).
             *
             * @return the url, or null to use the application's DataSource (the default)
             */
            public String getUrl() {
                return url;
            }

            /**
             * Sets the JDBC URL of the lease backend's own pool ({@code lease.jdbc.datasource.url}).
             *
             * @param url the url, or null to use the application's DataSource
             */
            public void setUrl(String url) {
                this.url = url;
            }

            /**
             * The login user of the lease backend's own pool ({@code lease.jdbc.datasource.username}).
             *
             * @return the user, or null
             */
            public String getUsername() {
                return username;
            }

            /**
             * Sets the login user of the lease backend's own pool ({@code lease.jdbc.datasource.username}).
             *
             * @param username the user
             */
            public void setUsername(String username) {
                this.username = username;
            }

            /**
             * The login password of the lease backend's own pool ({@code lease.jdbc.datasource.password}).
             *
             * @return the password, or null
             */
            public String getPassword() {
                return password;
            }

            /**
             * Sets the login password of the lease backend's own pool ({@code lease.jdbc.datasource.password}).
             *
             * @param password the password
             */
            public void setPassword(String password) {
                this.password = password;
            }

            /**
             * The driver class of the lease backend's own pool ({@code lease.jdbc.datasource.driver-class-name}).
             *
             * @return the class name, or null to derive it from the url
             */
            public String getDriverClassName() {
                return driverClassName;
            }

            /**
             * Sets the driver class of the lease backend's own pool
             * ({@code lease.jdbc.datasource.driver-class-name}).
             *
             * @param driverClassName the class name, or null to derive it from the url
             */
            public void setDriverClassName(String driverClassName) {
                this.driverClassName = driverClassName;
            }

            /**
             * The most connections of the lease backend's own pool
             * ({@code lease.jdbc.datasource.maximum-pool-size}).
             *
             * @return the size, 4 by default
             */
            public int getMaximumPoolSize() {
                return maximumPoolSize;
            }

            /**
             * Sets the most connections of the lease backend's own pool
             * ({@code lease.jdbc.datasource.maximum-pool-size}).
             *
             * @param maximumPoolSize at least 1
             */
            public void setMaximumPoolSize(int maximumPoolSize) {
                this.maximumPoolSize = maximumPoolSize;
            }
        }
    }

    /**
     * etcd backend: one key per lease name under the key prefix, bound to an etcd lease of the lease's ttl; fenced by
     * the key's create_revision. The client is the application's io.etcd.jetcd.Client bean, else one built from
     * 'endpoints'.
     */
    public static class Etcd {

        /**
         * etcd client URLs, comma-separated, such as 'http://etcd1:2379,http://etcd2:2379,http://etcd3:2379'. Not
         * needed when the application already has an io.etcd.jetcd.Client bean, which is then reused.
         */
        private List<String> endpoints;

        /**
         * Prefix of every lease key; the key of lease 'invoice-42' is '<prefix>invoice-42'. Give the application's
         * etcd user a role with read-write permission on this prefix only.
         */
        private String keyPrefix = "/leases/";

        /** etcd settings with their defaults. */
        public Etcd() {
        }

        /**
         * The etcd client URLs to connect to when the application has no {@code io.etcd.jetcd.Client} bean
         * ({@code lease.etcd.endpoints}).
         *
         * @return the URLs, or null
         */
        public List<String> getEndpoints() {
            return endpoints;
        }

        /**
         * Sets the etcd client URLs ({@code lease.etcd.endpoints}).
         *
         * @param endpoints URLs such as {@code http://127.0.0.1:2379}
         */
        public void setEndpoints(List<String> endpoints) {
            this.endpoints = endpoints;
        }

        /**
         * The prefix of every lease key ({@code lease.etcd.key-prefix}).
         *
         * @return the prefix, {@code /leases/} by default
         */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /**
         * Sets the prefix of every lease key ({@code lease.etcd.key-prefix}).
         *
         * @param keyPrefix a non-empty prefix such as {@code /myapp/leases/}
         */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** Resource-side fencing with JdbcFence (table lease_fence). */
    public static class Fence {

        /** When to create the lease_fence table: embedded (only for embedded databases), always or never. */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        /** Fence settings with their defaults. */
        public Fence() {
        }

        /**
         * When to create the {@code lease_fence} table ({@code lease.fence.initialize-schema}).
         *
         * @return embedded (the default), always or never
         */
        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        /**
         * Sets when to create the {@code lease_fence} table ({@code lease.fence.initialize-schema}).
         *
         * @param initializeSchema embedded (the default), always or never
         */
        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }
    }

    /**
     * The Actuator health contributor 'lease' (one entry per backend in use); turned off with
     * 'management.health.lease.enabled=false'.
     */
    public static class Health {

        /**
         * How long a health check waits for a backend to answer before reporting it DOWN. The check never takes a
         * lease, and a backend that has not answered an earlier check is not asked again until it does.
         */
        private Duration timeout = Duration.ofSeconds(2);

        /** Health settings with their defaults. */
        public Health() {
        }

        /**
         * How long a health check waits for a backend ({@code lease.health.timeout}).
         *
         * @return the timeout, 2 s by default
         */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets how long a health check waits for a backend ({@code lease.health.timeout}).
         *
         * @param timeout a positive timeout
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** Leader elections: settings per election, or elections declared without a @LeaderOnly method. */
    public static class Leader {

        /**
         * Elections by name. An election a @LeaderOnly method declares needs no entry; an entry sets its ttl and
         * renewal interval, or declares an election only used programmatically (through LeaderElections), which then
         * needs its kind.
         */
        private final Map<String, Election> elections = new LinkedHashMap<>();

        /** Leader settings with their defaults. */
        public Leader() {
        }

        /**
         * Elections by name ({@code lease.leader.elections.<name>.*}).
         *
         * @return the elections, never null
         */
        public Map<String, Election> getElections() {
            return elections;
        }
    }

    /** One election ({@code lease.leader.elections.<name>.*}). */
    public static class Election {

        /**
         * CORRECTNESS or EFFICIENCY: which backend may hold the election. Required unless a @LeaderOnly method names
         * the election, and then it must agree with it.
         */
        private LeaseKind kind;

        /** Time to live of each term's lease; lease.default-ttl when unset. */
        private Duration ttl;

        /** How often each term's lease is renewed, below half its ttl; lease.renew-every or ttl/3 when unset. */
        private Duration renewEvery;

        /** An election with no settings. */
        public Election() {
        }

        /**
         * The kind of the election's terms.
         *
         * @return the kind, or null when a @LeaderOnly method gives it
         */
        public LeaseKind getKind() {
            return kind;
        }

        /**
         * Sets the kind of the election's terms.
         *
         * @param kind CORRECTNESS or EFFICIENCY
         */
        public void setKind(LeaseKind kind) {
            this.kind = kind;
        }

        /**
         * The ttl of each term's lease.
         *
         * @return the ttl, or null for lease.default-ttl
         */
        public Duration getTtl() {
            return ttl;
        }

        /**
         * Sets the ttl of each term's lease.
         *
         * @param ttl a positive duration
         */
        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }

        /**
         * How often each term's lease is renewed.
         *
         * @return the interval, or null for the default
         */
        public Duration getRenewEvery() {
            return renewEvery;
        }

        /**
         * Sets how often each term's lease is renewed.
         *
         * @param renewEvery a positive duration below half the ttl
         */
        public void setRenewEvery(Duration renewEvery) {
            this.renewEvery = renewEvery;
        }
    }
}
