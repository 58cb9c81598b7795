package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;

/**
 * What a grant costs ZooKeeper, counted by the server (the requests it received on the client's session): an
 * uncontended acquire+release with version tokens is the grant's {@code multi} and the release's {@code multi}, as
 * plain Curator would need for the same two writes. The release reads the holder first only where the grant's session
 * is in doubt, and then still leaves a successor's holder alone.
 */
class ZooKeeperGrantRequestsTest {

    private static final String ROOT = "/request-leases";
    /** Long, so that the client sends no ping inside a measurement (it pings after a third of it without traffic). */
    private static final Duration SESSION_TIMEOUT = seconds(90);
    /** The grant's multi and the release's multi. */
    private static final double FLOOR = 2;

    private static TestingServer server;
    private static CuratorFramework client;
    private static CuratorFramework otherClient;
    private static ZooKeeperLeaseBackend backend;
    private static ZooKeeperLeaseBackend other;
    private static LeaseEngine engine;
    private static final Map<String, String> lossReasons = new ConcurrentHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        client = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        otherClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT);
        other = new ZooKeeperLeaseBackend(otherClient, ROOT, SESSION_TIMEOUT);
        engine = ZooKeeperTesting.engine(backend);
    }

    @AfterAll
    static void stop() throws Exception {
        if (server == null) {
            return;
        }
        engine.close();
        backend.close();
        other.close();
        client.close();
        otherClient.close();
        server.close();
    }

    @Test
    void anUncontendedAcquireAndReleaseCostsTheGrantAndTheReleaseMultiOnly() throws Exception {
        LeaseSpec spec = LeaseSpec.of("uncontended", LeaseKind.CORRECTNESS).withTtl(seconds(30))
                .withWaitFor(seconds(10));
        engine.acquire(spec).close(); // creates the name's znodes, which later grants find
        int rounds = 40;
        long before = ZooKeeperTesting.requestsReceived(server, client);
        for (int i = 0; i < rounds; i++) {
            try (Lease lease = engine.acquire(spec)) {
                assertThat(lease.token().value()).isPositive();
            }
        }
        double perRound = (ZooKeeperTesting.requestsReceived(server, client) - before) / (double) rounds;
        assertThat(perRound).as("ZooKeeper requests per uncontended acquire+release").isLessThanOrEqualTo(FLOOR + 0.05);
    }

    /**
     * An attempt on a name someone else holds: the grant's {@code multi} fails on the holder, and one read of it tells
     * it is not an orphan of ours (which the attempt would remove); nothing more.
     */
    @Test
    void anAttemptOnABusyNameCostsTheMultiAndOneRead() throws Exception {
        String name = "busy";
        ZkGrant held = other.tryAcquire(new GrantRequest(name, seconds(30), reason -> { })).orElseThrow();
        LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(30));
        assertThat(engine.tryAcquire(spec)).as("first attempt").isEmpty();

        long before = ZooKeeperTesting.requestsReceived(server, client);
        assertThat(engine.tryAcquire(spec)).as("second attempt").isEmpty();
        assertThat(ZooKeeperTesting.requestsReceived(server, client) - before).as("requests of a busy attempt")
                .isEqualTo(2);
        assertThat(other.renew(held)).isTrue();
        other.release(held);
    }

    /**
     * A grant reported lost is in doubt: its holder was deleted by someone else, and here an operator then deleted the
     * name too, so a successor's grant brought the counter back to the lost grant's version. A release that trusted
     * the version alone would delete the successor's holder; it reads the holder first and leaves it alone.
     */
    @Test
    void aReleaseOfALostGrantLeavesASuccessorAtTheSameVersionAlone() throws Exception {
        String name = "lost-then-recreated";
        ZkGrant stale = backend.tryAcquire(new GrantRequest(name, seconds(30),
                reason -> lossReasons.put(name, reason))).orElseThrow();
        assertThat(backend.renew(stale)).as("its holder is watched now").isTrue();
        otherClient.delete().forPath(ROOT + "/" + name + "/holder");
        await().atMost(seconds(10)).until(() -> lossReasons.containsKey(name));
        otherClient.delete().forPath(ROOT + "/" + name);
        ZkGrant successor = other.tryAcquire(new GrantRequest(name, seconds(30), reason -> { })).orElseThrow();
        assertThat(successor.version()).as("the name started again").isEqualTo(stale.version());

        backend.release(stale);

        assertThat(otherClient.checkExists().forPath(ROOT + "/" + name + "/holder")).as("the successor's holder")
                .isNotNull();
        assertThat(other.renew(successor)).isTrue();
        other.release(successor);
    }
}
