package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

/**
 * The contract suite with zxid tokens, and idle names' znodes deleted after a short idle time while it runs: the
 * same two backends on two clients (two sessions) as {@link ZooKeeperLeaseBackendContractTest}.
 */
class ZooKeeperZxidLeaseBackendContractTest extends LeaseBackendContractTest<ZkGrant> {

    private static final String ROOT = "/contract-leases-zxid";
    private static final Duration SESSION_TIMEOUT = seconds(40);
    /** Short, so that idle names' znodes are deleted while the suite runs: the contract must hold regardless. */
    private static final Duration IDLE = Duration.ofMillis(300);

    private static TestingServer server;
    private static CuratorFramework firstClient;
    private static CuratorFramework secondClient;
    private static CuratorFramework adminClient;
    private static ZooKeeperLeaseBackend first;
    private static ZooKeeperLeaseBackend second;

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperTesting.startServer();
        firstClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        secondClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        adminClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        first = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT, ZooKeeperTokenSource.ZXID, IDLE);
        second = new ZooKeeperLeaseBackend(secondClient, ROOT, SESSION_TIMEOUT, ZooKeeperTokenSource.ZXID, IDLE);
    }

    @AfterAll
    static void stopServer() throws Exception {
        first.close();
        second.close();
        firstClient.close();
        secondClient.close();
        adminClient.close();
        server.close();
    }

    @Override
    protected LeaseBackend<ZkGrant> backend() {
        return first;
    }

    @Override
    protected LeaseBackend<ZkGrant> secondBackend() {
        return second;
    }

    @Override
    protected void breakLease(String name) throws Exception {
        try {
            adminClient.delete().forPath(ROOT + "/" + name + "/holder");
        }
        catch (KeeperException.NoNodeException alreadyGone) {
            // Nothing held: nothing to break.
        }
    }

    /** Expires the first client's whole session, as a pause longer than the session timeout would. */
    @Override
    protected void letExpire(ZkGrant grant) throws Exception {
        ZooKeeperTesting.expireSessionAndReconnect(firstClient, server.getConnectString());
    }
}
