package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;

/**
 * Batch renewal on a three-node ensemble, with the holder on one server and the operator who deletes its holder on
 * another: the deletion may not have reached the holder's server yet when the renewal is sent, and the {@code sync}
 * must still make the renewal see it.
 */
class ZooKeeperEnsembleRenewalTest {

    private static final Duration SESSION_TIMEOUT = seconds(20);
    private static final String ROOT = "/ensemble-leases";

    @Test
    void aRenewalOnAnotherServerThanTheDeletionStillSeesIt() throws Exception {
        List<InstanceSpec> specs = IntStream.rangeClosed(1, 3).mapToObj(ZooKeeperTesting::spec).toList();
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            List<InstanceSpec> servers = new ArrayList<>(cluster.getInstances());
            try (CuratorFramework holderClient = ZooKeeperTesting.client(servers.get(0).getConnectString(), SESSION_TIMEOUT);
                    CuratorFramework operator = ZooKeeperTesting.client(servers.get(1).getConnectString(), SESSION_TIMEOUT);
                    ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(holderClient, ROOT, SESSION_TIMEOUT)) {
                for (int round = 0; round < 50; round++) {
                    List<ZkGrant> grants = new ArrayList<>();
                    for (int i = 0; i < 2; i++) {
                        grants.add(backend.tryAcquire(new GrantRequest("ensemble-" + round + "-" + i, seconds(10),
                                reason -> { })).orElseThrow());
                    }
                    assertThat(backend.renewAll(grants)).isEmpty();
                    operator.delete().forPath(ROOT + "/" + grants.get(0).name() + "/holder");
                    assertThat(backend.renewAll(grants)).as("round " + round).containsExactly(grants.get(0));
                    for (ZkGrant grant : grants) {
                        backend.release(grant);
                    }
                }
            }
        }
    }
}
