package dev.lease.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.lease.zookeeper.ZooKeeperTokenSource;

/**
 * The ZooKeeper backend ({@code lease.zookeeper.*}): leases fenced by the version of a persistent znode per lease name,
 * or by zxids. See {@link ZooKeeperLeaseConfiguration}.
 */
@ConfigurationProperties("lease.zookeeper")
public class ZooKeeperLeaseProperties {

    /**
     * ZooKeeper ensemble, such as 'zk1:2181,zk2:2181,zk3:2181'. Not needed when the application already has a
     * CuratorFramework bean, which is then reused.
     */
    private @Nullable String connectString;

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
    private @Nullable Duration connectionTimeout;

    /**
     * Where fencing tokens come from: 'version' (the version of the name's persistent znode; idle names' znodes
     * are then kept for ever, because a re-created znode starts again at version 0) or 'zxid' (the zxid of the
     * granting write: rises ensemble-wide, also across deletion and re-creation, so idle names may be deleted).
     * Switching from version to zxid keeps tokens rising; never switch back on names whose tokens guard resources.
     * All instances using a name must use the same value: a version instance refuses names zxid grants used.
     * Switch with all instances stopped.
     */
    private ZooKeeperTokenSource token = ZooKeeperTokenSource.VERSION;

    /**
     * Delete the znode of a lease name nobody held, and that did not change, for this long, so that per-entity
     * names (such as 'invoice-42') do not pile up in ZooKeeper. Only allowed with lease.zookeeper.token=zxid.
     * Unset (the default) keeps idle names for ever.
     */
    private @Nullable Duration deleteIdleAfter;

    /**
     * The identity the client authenticates with. With it, every znode the library creates is creator-only, so
     * no other client of the ensemble can delete holders or counters; without it, they are world-writable.
     */
    private final Authorization authorization = new Authorization();

    /** ZooKeeper settings with their defaults. */
    public ZooKeeperLeaseProperties() {
    }

    public @Nullable String getConnectString() {
        return connectString;
    }

    public void setConnectString(@Nullable String connectString) {
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

    public @Nullable Duration getConnectionTimeout() {
        return connectionTimeout;
    }

    public void setConnectionTimeout(@Nullable Duration connectionTimeout) {
        this.connectionTimeout = connectionTimeout;
    }

    public ZooKeeperTokenSource getToken() {
        return token;
    }

    public void setToken(ZooKeeperTokenSource token) {
        this.token = token;
    }

    public @Nullable Duration getDeleteIdleAfter() {
        return deleteIdleAfter;
    }

    public void setDeleteIdleAfter(@Nullable Duration deleteIdleAfter) {
        this.deleteIdleAfter = deleteIdleAfter;
    }

    public Authorization getAuthorization() {
        return authorization;
    }

    /**
     * The identity the ZooKeeper client authenticates with ({@code lease.zookeeper.authorization.*}), such as
     * scheme {@code digest} with credentials {@code leases:secret}, or {@code sasl}. Set both or neither.
     */
    public static class Authorization {

        /** Authentication scheme, such as 'digest' (credentials 'user:password') or 'sasl'. */
        private @Nullable String scheme;

        /** The credentials for the scheme, such as 'leases:secret' for digest. Never logged. */
        private @Nullable String credentials;

        /** No authorization. */
        public Authorization() {
        }

        public @Nullable String getScheme() {
            return scheme;
        }

        public void setScheme(@Nullable String scheme) {
            this.scheme = scheme;
        }

        public @Nullable String getCredentials() {
            return credentials;
        }

        public void setCredentials(@Nullable String credentials) {
            this.credentials = credentials;
        }

        /** A masked form: the credentials never reach a log line or an error report. */
        @Override
        public String toString() {
            return "Authorization[scheme=" + scheme + ", credentials=" + (credentials == null ? null : "***") + "]";
        }
    }
}
