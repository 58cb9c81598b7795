package dev.lease.autoconfigure;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.client.ConnectStringParser;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Conditional;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.IdleDeletion;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The ZooKeeper backend, available when Curator is on the classpath and either {@code lease.zookeeper.connect-string}
 * is set or the application has a {@link CuratorFramework} bean (which is then reused and left to its owner).
 * Otherwise a client is created from {@code lease.zookeeper.*} and the application's
 * {@link CuratorFrameworkBuilderCustomizer}s, connected before startup goes on, and closed on shutdown. When every server refuses the connection, the startup fails at once, before the client starts.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(CuratorFramework.class)
@ConditionalOnLeaseBackend(BackendType.ZOOKEEPER)
@Conditional(ZooKeeperLeaseConfiguration.ConnectStringOrClient.class)
@EnableConfigurationProperties(ZooKeeperLeaseProperties.class)
class ZooKeeperLeaseConfiguration {

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseConfiguration.class);

    private static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(10);

    @Bean
    @ConditionalOnMissingBean(CuratorFramework.class)
    CuratorNotifications leaseCuratorNotifications() {
        return new CuratorNotifications();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(CuratorFramework.class)
    CuratorFramework leaseCuratorFramework(ZooKeeperLeaseProperties zk,
            ObjectProvider<CuratorFrameworkBuilderCustomizer> customizers, CuratorNotifications notifications) {
        String connectString = zk.getConnectString();
        Duration connectionTimeout = connectionTimeout(zk);
        long deadline = System.nanoTime() + connectionTimeout.toNanos();
        ConnectProbe.Failures failed = ConnectProbe.probe(servers(connectString), connectionTimeout);
        if (!failed.isEmpty()) {
            throw failed.unreachable("ZooKeeper", connectString, "server", "lease.zookeeper.connect-string",
                    "start the ensemble");
        }
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(millis(zk.getSessionTimeout()))
                .connectionTimeoutMs(millis(connectionTimeout))
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2000))
                .runSafeService(notifications.executor());
        ZooKeeperAccess.apply(builder, zk.getAuthorization());
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        CuratorFramework client = builder.build();
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected(
                    (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())),
                    TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            connected = false;
        }
        if (!connected) {
            closeInBackground(client);
            throw new LeaseConfigurationException("Could not connect to ZooKeeper at '" + connectString + "' within "
                    + Durations.format(connectionTimeout) + " (lease.zookeeper.connection-timeout).",
                    "check that the ensemble is reachable and fix lease.zookeeper.connect-string, or raise "
                            + "lease.zookeeper.connection-timeout.");
        }
        log.info("Connected to ZooKeeper at " + connectString + " for leases (session timeout "
                + Durations.format(Duration.ofMillis(client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()))
                + ")");
        return client;
    }

    /**
     * The configured connection timeout, or the default capped at the session timeout. Curator warns about a
     * connection timeout beyond the session timeout: a client would go on waiting for a connection after the session
     * it is for may have expired.
     */
    private static Duration connectionTimeout(ZooKeeperLeaseProperties zk) {
        Duration session = zk.getSessionTimeout();
        Duration configured = zk.getConnectionTimeout();
        if (configured == null) {
            return DEFAULT_CONNECTION_TIMEOUT.compareTo(session) <= 0 ? DEFAULT_CONNECTION_TIMEOUT : session;
        }
        if (configured.compareTo(session) > 0) {
            throw new LeaseConfigurationException("lease.zookeeper.connection-timeout ("
                    + Durations.format(configured) + ") exceeds lease.zookeeper.session-timeout ("
                    + Durations.format(session) + "): the client would go on waiting "
                    + "for a connection after the session it is for may have expired.",
                    "set lease.zookeeper.connection-timeout to at most " + Durations.format(session)
                            + ", or leave it unset (" + Durations.format(DEFAULT_CONNECTION_TIMEOUT) + ", or the session timeout if that is shorter).");
        }
        return configured;
    }

    private static List<InetSocketAddress> servers(String connectString) {
        try {
            return new ConnectStringParser(connectString).getServerAddresses();
        }
        catch (IdleDeletion.Refused ex) {
            throw new LeaseConfigurationException(ex.description(), ex.action());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException("lease.zookeeper.connect-string '" + connectString
                    + "' is not a ZooKeeper connect string: " + ex.getMessage() + ".",
                    "set it to host:port pairs separated by commas, such as 'zk1:2181,zk2:2181,zk3:2181'.");
        }
    }

    /**
     * A client still trying to connect holds close() until its attempt times out, which can take the whole session
     * timeout: the failing startup need not wait for that.
     */
    private static void closeInBackground(CuratorFramework client) {
        Thread closer = new Thread(client::close, "lease-zookeeper-close");
        closer.setDaemon(true);
        closer.start();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(ZooKeeperLeaseBackend.class)
    ZooKeeperLeaseBackend zooKeeperLeaseBackend(CuratorFramework client, ZooKeeperLeaseProperties zk,
            ObjectProvider<CuratorNotifications> ownClient) {
        if (client.getState() == CuratorFrameworkState.LATENT) {
            throw new LeaseConfigurationException("The application's CuratorFramework bean is not started, so the "
                    + "ZooKeeper lease backend cannot use it.",
                    "start it when it is created, e.g. @Bean(initMethod = \"start\", destroyMethod = \"close\").");
        }
        ZooKeeperLeaseBackend backend;
        try {
            backend = new ZooKeeperLeaseBackend(client, zk.getRoot(), zk.getSessionTimeout(), zk.getToken(),
                    zk.getDeleteIdleAfter());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage(), "set lease.zookeeper.root to a path such as /leases.");
        }
        try {
            ZooKeeperAccess.check(client, zk.getRoot(), ownClient.getIfAvailable() != null);
        }
        catch (RuntimeException ex) {
            backend.close();
            throw ex;
        }
        return backend;
    }

    private static int millis(Duration duration) {
        return (int) Math.min(Integer.MAX_VALUE, duration.toMillis());
    }

    /** A connect string to create a client from, or a client to reuse. */
    static final class ConnectStringOrClient extends AnyNestedCondition {

        ConnectStringOrClient() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty("lease.zookeeper.connect-string")
        static final class ConnectString {
        }

        @ConditionalOnBean(type = "org.apache.curator.framework.CuratorFramework")
        static final class Client {
        }
    }
}
