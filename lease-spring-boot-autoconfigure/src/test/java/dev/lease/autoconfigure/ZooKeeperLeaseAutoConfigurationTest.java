package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseConfigurationException;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

@ExtendWith(OutputCaptureExtension.class)
class ZooKeeperLeaseAutoConfigurationTest {

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseAutoConfigurationTest.class);

    /** Under {@code .invalid}, which never resolves (RFC 6761). */
    private static final String UNRESOLVABLE = "zk-lease-test.invalid";

    private static TestingServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ZooKeeperLeaseConfiguration.class,
                    InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class));

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Test
    void aConnectStringIsAllItTakesAndTheClientIsClosedOnShutdown() {
        AtomicReference<CuratorFramework> created = new AtomicReference<>();
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString())
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperLeaseBackend.class);
                    created.set(context.getBean(CuratorFramework.class));
                    LeaseTemplate template = context.getBean(LeaseTemplate.class);
                    long token = template.execute(LeaseSpec.of("auto-zk", LeaseKind.CORRECTNESS).withTtl(seconds(5)),
                            lease -> lease.token().value());
                    long next = template.execute(LeaseSpec.of("auto-zk", LeaseKind.CORRECTNESS).withTtl(seconds(5)),
                            lease -> lease.token().value());
                    assertThat(next).isGreaterThan(token);
                    assertThat(created.get().checkExists().forPath("/leases/auto-zk")).as("default root").isNotNull();
                });
        assertThat(created.get().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
    }

    @Test
    void deletingIdleNamesWithVersionTokensIsRefusedAtStartup() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.delete-idle-after=1h").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("lease.zookeeper.delete-idle-after")
                            .hasMessageContaining("lease.zookeeper.token=zxid")
                            .hasMessageContaining("version");
                });
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.token=zxid", "lease.zookeeper.delete-idle-after=0s").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("lease.zookeeper.delete-idle-after must be positive");
                });
    }

    /** zxid tokens exceed the znode version, and keep rising after an idle name's znode was deleted. */
    @Test
    void zxidTokensAndIdleNamesDeletedWhenConfigured() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.root=/idle-auto", "lease.zookeeper.token=zxid",
                "lease.zookeeper.delete-idle-after=200ms").run(context -> {
                    assertThat(context).hasNotFailed();
                    CuratorFramework client = context.getBean(CuratorFramework.class);
                    LeaseTemplate template = context.getBean(LeaseTemplate.class);
                    LeaseSpec spec = LeaseSpec.of("auto-idle", LeaseKind.CORRECTNESS).withTtl(seconds(5));
                    long token = template.execute(spec, lease -> lease.token().value());
                    int version = client.checkExists().forPath("/idle-auto/auto-idle").getVersion();
                    assertThat(token).as("zxid token, above the version token of the same grant").isGreaterThan(version);
                    await().atMost(seconds(20)).until(() -> client.checkExists().forPath("/idle-auto/auto-idle") == null);
                    long next = template.execute(spec, lease -> lease.token().value());
                    assertThat(next).isGreaterThan(token);
                });
    }

    /**
     * Customizers replace the defaults of the client the auto-configuration builds (here its retry policy), and that
     * client's callbacks run on a thread of the context's own, which ends when the context closes: Curator's own
     * executor would outlive every closed client.
     */
    @Test
    void customizersShapeTheClientAndItsCallbackThreadEndsWithTheContext() {
        RetryOneTime retry = new RetryOneTime(10);
        AtomicReference<Thread> callbacks = new AtomicReference<>();
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString())
                .withBean(CuratorFrameworkBuilderCustomizer.class, () -> builder -> builder.retryPolicy(retry))
                .run(context -> {
                    CuratorFramework client = context.getBean(CuratorFramework.class);
                    assertThat(client.getZookeeperClient().getRetryPolicy()).isSameAs(retry);
                    client.runSafe(() -> callbacks.set(Thread.currentThread())).get(30, TimeUnit.SECONDS);
                    assertThat(callbacks.get().getName()).isEqualTo(CuratorNotifications.THREAD_NAME);
                });
        await().atMost(seconds(10)).until(() -> !callbacks.get().isAlive());
    }

    /**
     * The defaults of lease.default-ttl and lease.zookeeper.session-timeout must fit each other on a server with
     * ZooKeeper's default configuration (tickTime 2000 ms, so sessions of up to 40 s).
     */
    @Test
    void anAnnotatedMethodOnDefaultsStartsWithOnlyAConnectString() throws Exception {
        InstanceSpec defaults = new InstanceSpec(null, -1, -1, -1, true, -1, 2000, -1);
        try (TestingServer stock = new TestingServer(defaults, true)) {
            runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + stock.getConnectString())
                    .withBean(DefaultJob.class).run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(DefaultJob.class).run()).isPositive();
                    });
        }
    }

    static class DefaultJob {
        @dev.lease.Leased(name = "defaults", kind = LeaseKind.CORRECTNESS)
        public long run() {
            return dev.lease.LeaseContext.token().value();
        }
    }

    @Test
    void aTtlLongerThanTheSessionTimeoutIsAConfigurationError() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.session-timeout=10s").run(context -> {
                    LeaseTemplate template = context.getBean(LeaseTemplate.class);
                    assertThatThrownBy(() -> template.execute(LeaseSpec.of("too-long", LeaseKind.CORRECTNESS)
                            .withTtl(Duration.ofSeconds(30)), lease -> null))
                            .isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("too-long").hasMessageContaining("session-timeout");
                });
    }

    /**
     * Nothing listens: the startup fails on the refused connection with the lease message alone, rather than after
     * the connection timeout (10 s by default here) of client retries, each logged with its stack trace.
     */
    @Test
    void aClosedPortFailsTheStartupWithTheLeaseMessageBeforeAnyClientNoise(CapturedOutput output) throws Exception {
        String connectString = "127.0.0.1:" + closedPort();
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + connectString)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("Could not connect to ZooKeeper at '" + connectString + "'")
                            .hasMessageContaining("refused")
                            .hasMessageContaining("lease.zookeeper.connect-string");
                });
        assertThat(output.getOut().lines().filter(line -> line.contains("ConnectException")).count())
                .as("lines of client stack traces").isLessThan(3);
    }

    /**
     * A host name that resolves to nothing (a typo, a missing DNS entry) is said to be one, naming the host, with the
     * fix for a host name: not reported as a refused connection with "start the ensemble".
     */
    @Test
    void anUnresolvableHostFailsTheStartupNamingTheHostAndTheFix() {
        String connectString = UNRESOLVABLE + ":2181";
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + connectString)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("Could not connect to ZooKeeper at '" + connectString + "'")
                            .hasMessageContaining("the host '" + UNRESOLVABLE + "' does not resolve")
                            .hasMessageNotContaining("refused")
                            .extracting(failure -> ((LeaseConfigurationException) failure).action()).asString()
                            .contains("host name in lease.zookeeper.connect-string")
                            .doesNotContain("start the ensemble");
                });
    }

    /** One host does not resolve and the other server refuses: the message says both, and the action both fixes. */
    @Test
    void anUnresolvableHostBesideARefusingServerNamesBoth() throws Exception {
        String refusing = "127.0.0.1:" + closedPort();
        String connectString = UNRESOLVABLE + ":2181," + refusing;
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + connectString)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("the host '" + UNRESOLVABLE + "' does not resolve")
                            .hasMessageContaining("every other server refused the connection (" + refusing)
                            .extracting(failure -> ((LeaseConfigurationException) failure).action()).asString()
                            .contains("host name in lease.zookeeper.connect-string", "start the ensemble");
                });
    }

    /**
     * A server that accepts connections but never answers, as a stuck or overloaded one: the client waits for the
     * connection timeout, and the message says so.
     */
    @Test
    void aSilentServerFailsTheStartupWithinTheConnectionTimeoutNamingTheFix() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String connectString = "127.0.0.1:" + silent.getLocalPort();
            long start = System.nanoTime();
            runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + connectString,
                    "lease.zookeeper.connection-timeout=500ms").run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause()
                                .isInstanceOf(LeaseConfigurationException.class)
                                .hasMessageContaining(connectString)
                                .hasMessageContaining("lease.zookeeper.connect-string")
                                .hasMessageContaining("lease.zookeeper.connection-timeout");
                    });
            long elapsed = System.nanoTime() - start;
            log.info("Silent ZooKeeper: startup failed after " + TimeUnit.NANOSECONDS.toMillis(elapsed) + " ms");
            assertThat(elapsed).as("startup did not hang").isLessThan(seconds(30).toNanos());
        }
    }

    /** Curator warns when its connection timeout exceeds the session timeout; the defaults must never make it. */
    @Test
    void theDefaultConnectionTimeoutNeverExceedsTheSessionTimeout(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.session-timeout=4s").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().getConnectionTimeoutMs())
                            .isEqualTo(4000);
                });
        assertThat(output).doesNotContain("is less than connection timeout");
    }

    @Test
    void aConnectionTimeoutBeyondTheSessionTimeoutFailsTheStartupNamingBoth() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.session-timeout=4s", "lease.zookeeper.connection-timeout=10s").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("lease.zookeeper.connection-timeout")
                            .hasMessageContaining("lease.zookeeper.session-timeout");
                });
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void theApplicationsCuratorFrameworkIsReusedAndLeftToItsOwner() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.root=/app-leases")
                .withUserConfiguration(ApplicationClient.class).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(CuratorFramework.class)
                            .hasSingleBean(ZooKeeperLeaseBackend.class).doesNotHaveBean("leaseCuratorFramework");
                    CuratorFramework client = context.getBean(CuratorFramework.class);
                    context.getBean(LeaseTemplate.class).execute(
                            LeaseSpec.of("reused", LeaseKind.CORRECTNESS).withTtl(seconds(5)), lease -> null);
                    assertThat(client.checkExists().forPath("/app-leases/reused")).isNotNull();
                });
    }

    @Test
    void noConnectStringAndNoClientMeansNoZooKeeperBackend() {
        runner.withPropertyValues("lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ZooKeeperLeaseBackend.class)
                        .doesNotHaveBean(CuratorFramework.class));
    }

    @Test
    void withoutCuratorOnTheClasspathTheConnectStringIsIgnored() {
        runner.withClassLoader(new FilteredClassLoader(CuratorFramework.class))
                .withPropertyValues("lease.backend=in-memory", "lease.zookeeper.connect-string=" + server.getConnectString())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ZooKeeperLeaseBackend.class));
    }

    @Test
    void anInvalidRootFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.root=leases/").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("lease.zookeeper.root");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationClient {

        @Bean(initMethod = "start", destroyMethod = "close")
        CuratorFramework applicationCurator() {
            return CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        }
    }
}
