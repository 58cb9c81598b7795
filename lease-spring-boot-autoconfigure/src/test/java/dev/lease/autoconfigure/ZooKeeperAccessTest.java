package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.lease.Lease;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;

/**
 * On a real ZooKeeper: with {@code lease.zookeeper.authorization.*}, a neighbour without the identity can neither
 * take nor reset a lease; without it, startup says that anyone can.
 */
@ExtendWith(OutputCaptureExtension.class)
class ZooKeeperAccessTest {

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

    private ApplicationContextRunner withIdentity(String root) {
        return runner.withPropertyValues("lease.backend=zookeeper",
                "lease.zookeeper.connect-string=" + server.getConnectString(), "lease.zookeeper.root=" + root,
                "lease.zookeeper.authorization.scheme=digest",
                "lease.zookeeper.authorization.credentials=leases:s3cret");
    }

    private static CuratorFramework neighbour(String... digest) throws InterruptedException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString()).retryPolicy(new RetryOneTime(100));
        if (digest.length > 0) {
            builder.authorization("digest", digest[0].getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = builder.build();
        client.start();
        assertThat(client.blockUntilConnected(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        return client;
    }

    @Test
    void aNeighbourWithoutTheIdentityCanNeitherTakeNorResetALease(CapturedOutput output) throws Exception {
        withIdentity("/guarded").run(first -> withIdentity("/guarded").run(second -> {
            assertThat(first).hasNotFailed();
            assertThat(second).hasNotFailed();
            LeaseTemplate a = first.getBean(LeaseTemplate.class);
            LeaseTemplate b = second.getBean(LeaseTemplate.class);
            List<Long> tokens = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                tokens.add(a.execute(spec(), lease -> lease.token().value()));
                tokens.add(b.execute(spec(), lease -> lease.token().value()));
            }
            assertThat(tokens).as("two instances with the identity contend normally").isSorted().doesNotHaveDuplicates();

            try (CuratorFramework stranger = neighbour(); CuratorFramework wrongPassword = neighbour("leases:guess")) {
                for (CuratorFramework intruder : List.of(stranger, wrongPassword)) {
                    try (Lease held = a.acquire(spec())) {
                        assertThatThrownBy(() -> intruder.delete().forPath("/guarded/billing/holder"))
                                .as("delete the holder").isInstanceOf(KeeperException.NoAuthException.class);
                        assertThat(held.isValid()).isTrue();
                    }
                    assertThatThrownBy(() -> intruder.delete().forPath("/guarded/billing"))
                            .as("delete an idle counter").isInstanceOf(KeeperException.NoAuthException.class);
                    assertThatThrownBy(() -> intruder.setData().forPath("/guarded/billing", new byte[0]))
                            .as("bump a counter").isInstanceOf(KeeperException.NoAuthException.class);
                    assertThatThrownBy(() -> intruder.create().withMode(CreateMode.PERSISTENT)
                            .forPath("/guarded/billing/holder")).as("create a persistent holder")
                            .isInstanceOf(KeeperException.NoAuthException.class);
                    assertThatThrownBy(() -> intruder.create().forPath("/guarded/squatted"))
                            .as("create a name under the root").isInstanceOf(KeeperException.NoAuthException.class);
                }
            }
            long after = a.execute(spec(), lease -> lease.token().value());
            assertThat(after).isGreaterThan(tokens.get(tokens.size() - 1));
        }));
        assertThat(output).doesNotContain("world-writable").doesNotContain("s3cret");
    }

    @Test
    void withoutAuthorizationStartupWarnsOnceThatAnyClientCanDeleteHoldersAndCounters(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=zookeeper",
                "lease.zookeeper.connect-string=" + server.getConnectString(), "lease.zookeeper.root=/open")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).containsOnlyOnce("world-writable")
                .contains("lease.zookeeper.authorization.scheme", "lease.zookeeper.authorization.credentials");
    }

    @Test
    void theApplicationsOwnClientWithTheDefaultAclIsWarnedAboutToo(CapturedOutput output) throws Exception {
        try (CuratorFramework own = neighbour("leases:s3cret")) {
            runner.withBean(CuratorFramework.class, () -> own, bean -> bean.setDestroyMethodName(""))
                    .withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.root=/own")
                    .run(context -> assertThat(context).hasNotFailed());
        }
        assertThat(output).contains("world-writable", "CuratorFramework bean", "CREATOR_ALL_ACL");
    }

    @Test
    void aWorldWritableRootIsRefusedWhenAuthorizationIsConfigured() throws Exception {
        try (CuratorFramework open = neighbour()) {
            open.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/legacy");
        }
        withIdentity("/legacy").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("/legacy is world-writable").hasMessageContaining("setAcl -R /legacy")
                    .hasMessageNotContaining("s3cret");
        });
    }

    @Test
    void credentialsWithoutASchemeAreRefused() {
        runner.withPropertyValues("lease.backend=zookeeper",
                "lease.zookeeper.connect-string=" + server.getConnectString(),
                "lease.zookeeper.authorization.credentials=leases:s3cret").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("lease.zookeeper.authorization.scheme")
                            .hasMessageNotContaining("s3cret");
                });
    }

    private static LeaseSpec spec() {
        return LeaseSpec.of("billing", LeaseKind.CORRECTNESS).withTtl(java.time.Duration.ofSeconds(5));
    }
}
