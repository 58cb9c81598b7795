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
 * The contract suite on a real ZooKeeper server, with two backends on two clients (two sessions) playing two
 * application instances. The session timeout is long enough for the suite's 30 s default ttl; expiry is forced by
 * expiring the first client's session on the server, the way a long pause would.
 */
class ZooKeeperLeaseBackendContractTest extends LeaseBackendContractTest<ZkGrant> {

    private static final String ROOT = "/contract-leases";
    private static final Duration SESSION_TIMEOUT = seconds(40);

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
        first = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT);
        second = new ZooKeeperLeaseBackend(secondClient, ROOT, SESSION_TIMEOUT);
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
