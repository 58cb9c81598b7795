package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

import dev.lease.core.Durations;
import dev.lease.core.LeaseConfigurationException;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The ZooKeeper backend, available when Curator is on the classpath and either {@code lease.zookeeper.connect-string}
 * is set or the application has a {@link CuratorFramework} bean (which is then reused and left to its owner).
 * Otherwise a client is created from {@code lease.zookeeper.*}, connected before startup goes on, and closed on
 * shutdown.
 */
@AutoConfiguration(before = LeaseAutoConfiguration.class)
@ConditionalOnClass(CuratorFramework.class)
@Conditional(ZooKeeperLeaseAutoConfiguration.ConnectStringOrClient.class)
@EnableConfigurationProperties(LeaseProperties.class)
public class ZooKeeperLeaseAutoConfiguration {

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseAutoConfiguration.class);

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(CuratorFramework.class)
    CuratorFramework leaseCuratorFramework(LeaseProperties properties) {
        LeaseProperties.Zookeeper zk = properties.getZookeeper();
        String connectString = zk.getConnectString();
        Duration connectionTimeout = zk.getConnectionTimeout();
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(millis(zk.getSessionTimeout()))
                .connectionTimeoutMs(millis(connectionTimeout))
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2000))
                .build();
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected(millis(connectionTimeout), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            connected = false;
        }
        if (!connected) {
            client.close();
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

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(ZooKeeperLeaseBackend.class)
    ZooKeeperLeaseBackend zooKeeperLeaseBackend(CuratorFramework client, LeaseProperties properties) {
        if (client.getState() == CuratorFrameworkState.LATENT) {
            throw new LeaseConfigurationException("The application's CuratorFramework bean is not started, so the "
                    + "ZooKeeper lease backend cannot use it.",
                    "start it when it is created, e.g. @Bean(initMethod = \"start\", destroyMethod = \"close\").");
        }
        LeaseProperties.Zookeeper zk = properties.getZookeeper();
        try {
            return new ZooKeeperLeaseBackend(client, zk.getRoot(), zk.getSessionTimeout());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage(), "set lease.zookeeper.root to a path such as /leases.");
        }
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
