package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.lease.spi.GrantRequest;

/** Idle deletion without the DELETE permission: said once at WARN, naming the permission; leases keep working. */
@ExtendWith(OutputCaptureExtension.class)
class ZooKeeperIdlePrivilegeTest {

    private static final String ROOT = "/undeletable";
    private static final String WARNING = "Idle lease names under " + ROOT + " cannot be deleted";

    @Test
    void withoutDeleteOnTheRootIdleNamesStayAndThatIsSaidOnce(CapturedOutput output) throws Exception {
        try (TestingServer server = ZooKeeperTesting.startServer();
                CuratorFramework client = ZooKeeperTesting.client(server.getConnectString(), seconds(30))) {
            int allButDelete = ZooDefs.Perms.ALL & ~ZooDefs.Perms.DELETE;
            client.create().withACL(List.of(new ACL(allButDelete, ZooDefs.Ids.ANYONE_ID_UNSAFE))).forPath(ROOT);
            ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, seconds(30),
                    ZooKeeperTokenSource.ZXID, Duration.ofMillis(1));
            try {
                backend.release(grant(backend, "idle"));
                await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
                    backend.deleteIdleNamesNow();
                    return output.toString().contains(WARNING);
                });
                for (int i = 0; i < 3; i++) {
                    backend.deleteIdleNamesNow();
                }
                assertThat(output.toString()).containsOnlyOnce(WARNING).contains("DELETE permission");
                assertThat(client.checkExists().forPath(ROOT + "/idle")).as("the idle name stays").isNotNull();
                backend.release(grant(backend, "idle"));
            }
            finally {
                backend.close();
            }
        }
    }

    private static ZkGrant grant(ZooKeeperLeaseBackend backend, String name) throws Exception {
        return backend.tryAcquire(new GrantRequest(name, seconds(10), reason -> { })).orElseThrow();
    }
}
