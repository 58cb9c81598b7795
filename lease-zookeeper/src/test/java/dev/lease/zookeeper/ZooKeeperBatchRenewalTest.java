package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;
import dev.lease.testing.TcpProxy;

/**
 * Batch renewal on a real server: one {@code sync} on the session confirms every grant of that session, a watch on each
 * holder reports one deleted by someone else at once, and a suspended or expired session loses them all.
 */
class ZooKeeperBatchRenewalTest {

    private static final String ROOT = "/batch-leases";
    /** Long, so that the client sends no ping inside a measurement (it pings after a third of it without traffic). */
    private static final Duration SESSION_TIMEOUT = seconds(90);
    private static final int GRANTS = 200;

    private TestingServer server;
    private CuratorFramework client;
    private CuratorFramework otherClient;
    private CuratorFramework operator;
    private ZooKeeperLeaseBackend backend;
    private ZooKeeperLeaseBackend other;
    private final Map<String, String> lossReasons = new ConcurrentHashMap<>();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        client = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        otherClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        operator = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT);
        other = new ZooKeeperLeaseBackend(otherClient, ROOT, SESSION_TIMEOUT);
    }

    @AfterEach
    void stop() throws Exception {
        backend.close();
        other.close();
        client.close();
        otherClient.close();
        operator.close();
        server.close();
    }

    @Test
    void renewingManyGrantsCostsOneRequestOnceTheirHoldersAreWatched() throws Exception {
        List<ZkGrant> grants = acquire(GRANTS);

        long before = requestsReceived();
        assertThat(backend.renewAll(grants)).as("lost on the first renewal").isEmpty();
        long first = requestsReceived() - before;
        // The first renewal sets one watch per holder, plus the sync; a ping may slip in.
        assertThat(first).as("requests of the first renewal of %d grants", GRANTS).isBetween(1L, GRANTS + 3L);

        before = requestsReceived();
        for (int tick = 0; tick < 5; tick++) {
            assertThat(backend.renewAll(grants)).as("lost on renewal " + tick).isEmpty();
        }
        long later = requestsReceived() - before;
        assertThat(later).as("requests of 5 later renewals of %d grants (one sync each, and perhaps a ping)", GRANTS)
                .isBetween(5L, 7L);

        before = requestsReceived();
        assertThat(backend.renew(grants.get(0))).as("single renewal").isTrue();
        assertThat(requestsReceived() - before).as("requests of a single renewal").isBetween(1L, 2L);
    }

    @Test
    void aHolderDeletedByHandIsReportedLostAtOnceAndTheOthersStayHeld() throws Exception {
        List<ZkGrant> grants = acquire(20);
        assertThat(backend.renewAll(grants)).isEmpty();
        ZkGrant victim = grants.get(7);

        operator.delete().forPath(ROOT + "/" + victim.name() + "/holder");

        // The watch tells the holder at once, before any renewal.
        await().atMost(seconds(10)).until(() -> lossReasons.containsKey(victim.name()));
        assertThat(lossReasons.get(victim.name())).contains("deleted").contains(victim.name());
        assertThat(backend.renewAll(grants)).as("lost after the deletion").containsExactly(victim);
        assertThat(backend.renew(victim)).as("renewing the deleted one alone").isFalse();
        assertThat(lossReasons).as("losses reported").containsOnlyKeys(victim.name());
        for (ZkGrant held : grants) {
            if (held != victim) {
                assertThat(grantTo(other, held.name())).as("taken from a holder still renewing " + held.name()).isNull();
            }
        }
        ZkGrant successor = grantTo(other, victim.name());
        assertThat(successor).as("the deleted one is free").isNotNull();
        assertThat(successor.value()).isGreaterThan(victim.value());
        backend.release(victim);
        assertThat(other.renew(successor)).as("the stale release left the successor alone").isTrue();
    }

    /**
     * A renewal sent right after someone deleted a watched holder reports it lost: the server sends the watch event
     * before the answer to the sync, and the event is handled before the sync's answer.
     */
    @Test
    void aRenewalRightAfterADeletionAlwaysSeesIt() throws Exception {
        for (int round = 0; round < 50; round++) {
            List<ZkGrant> grants = acquire(2);
            assertThat(backend.renewAll(grants)).isEmpty();
            operator.delete().forPath(ROOT + "/" + grants.get(0).name() + "/holder");
            assertThat(backend.renewAll(grants)).as("round " + round).containsExactly(grants.get(0));
            grants.forEach(g -> {
                try {
                    backend.release(g);
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            });
        }
    }

    /** A loss listener that blocks must not hold up the renewals of other leases (the event thread stays free). */
    @Test
    void aBlockingLossListenerDoesNotStallOtherRenewals() throws Exception {
        CountDownLatch listenerEntered = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        String name = "blocking-" + UUID.randomUUID();
        ZkGrant blocking = backend.tryAcquire(new GrantRequest(name, seconds(30), reason -> {
            listenerEntered.countDown();
            try {
                unblock.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        })).orElseThrow();
        List<ZkGrant> others = acquire(3);
        try {
            assertThat(backend.renewAll(List.of(blocking))).isEmpty();
            operator.delete().forPath(ROOT + "/" + name + "/holder");
            assertThat(listenerEntered.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

            CompletableFuture<Set<ZkGrant>> renewal = CompletableFuture.supplyAsync(() -> {
                try {
                    return backend.renewAll(others);
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            });
            assertThat(renewal.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("lost while a listener blocks")
                    .isEmpty();
        }
        finally {
            unblock.countDown();
        }
    }

    @Test
    void aHolderDeletedBeforeItsFirstRenewalIsReportedLostByIt() throws Exception {
        List<ZkGrant> grants = acquire(5);
        ZkGrant victim = grants.get(2);
        operator.delete().forPath(ROOT + "/" + victim.name() + "/holder");
        // Re-created by another session at once: a holder exists, but it is not the one this grant created.
        ZkGrant successor = grantTo(other, victim.name());
        assertThat(successor).isNotNull();

        assertThat(backend.renewAll(grants)).containsExactly(victim);
        // The listener hears it on another thread than the ZooKeeper event thread that found it.
        await().atMost(seconds(10)).until(() -> lossReasons.containsKey(victim.name()));
        assertThat(lossReasons).containsOnlyKeys(victim.name());
        assertThat(other.renew(successor)).isTrue();
    }

    @Test
    void anExpiredSessionLosesEveryGrant() throws Exception {
        List<ZkGrant> grants = acquire(10);
        assertThat(backend.renewAll(grants)).isEmpty();

        ZooKeeperTesting.expireSessionAndReconnect(client, server.getConnectString());

        assertThat(backend.renewAll(grants)).as("lost after the session expired").containsExactlyInAnyOrderElementsOf(grants);
        assertThat(lossReasons).hasSize(grants.size());
        assertThat(grantTo(other, grants.get(0).name())).as("free after the session expired").isNotNull();
    }

    /** The session survives the outage, and so do the holders; but a suspended lease was lost, and stays lost. */
    @Test
    void aSuspendedConnectionLosesEveryGrantEvenWhenTheSameSessionComesBack() throws Exception {
        List<ZkGrant> grants = acquire(10);
        assertThat(backend.renewAll(grants)).isEmpty();
        long session = client.getZookeeperClient().getZooKeeper().getSessionId();

        server.stop();
        await().atMost(seconds(20)).until(() -> lossReasons.size() == grants.size());
        assertThat(lossReasons.values()).allSatisfy(reason -> assertThat(reason).contains("SUSPENDED"));
        assertThat(backend.renewAll(grants)).as("lost while disconnected").containsExactlyInAnyOrderElementsOf(grants);
        server.restart();
        assertThat(client.blockUntilConnected((int) seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(client.getZookeeperClient().getZooKeeper().getSessionId()).as("same session").isEqualTo(session);

        assertThat(backend.renewAll(grants)).as("lost after reconnecting").containsExactlyInAnyOrderElementsOf(grants);
    }

    /**
     * A renewal sent into a link that freezes (silence, no reset) cannot confirm the session: it must report every
     * grant of that session lost (or fail, which counts the same), never held; grants of a session whose link still
     * works stay held.
     */
    @Test
    void aBatchInFlightWhenTheLinkFreezesLosesExactlyTheGrantsItCannotConfirm() throws Exception {
        Duration session = seconds(4);
        try (TcpProxy proxy = new TcpProxy(server.getPort());
                CuratorFramework cutOffClient = ZooKeeperTesting.client(proxy.address(), session);
                ZooKeeperLeaseBackend cutOff = new ZooKeeperLeaseBackend(cutOffClient, ROOT, session)) {
            List<ZkGrant> frozen = acquire(cutOff, 10);
            List<ZkGrant> reachable = acquire(backend, 10);
            assertThat(cutOff.renewAll(frozen)).isEmpty();
            assertThat(backend.renewAll(reachable)).isEmpty();

            proxy.freeze();
            CompletableFuture<Set<ZkGrant>> inFlight = CompletableFuture.supplyAsync(() -> {
                try {
                    return cutOff.renewAll(frozen);
                }
                catch (Exception ex) {
                    return Set.copyOf(frozen); // a renewal that fails loses the whole batch
                }
            });
            assertThat(inFlight.get(session.multipliedBy(3).plus(seconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("lost by the renewal in flight").containsExactlyInAnyOrderElementsOf(frozen);
            assertThat(backend.renewAll(reachable)).as("lost on the link that works").isEmpty();
            proxy.unfreeze();
        }
    }

    private List<ZkGrant> acquire(int count) throws Exception {
        return acquire(backend, count);
    }

    private List<ZkGrant> acquire(ZooKeeperLeaseBackend backend, int count) throws Exception {
        List<ZkGrant> grants = new ArrayList<>();
        String prefix = "batch-" + UUID.randomUUID() + "-";
        for (int i = 0; i < count; i++) {
            String name = prefix + i;
            grants.add(backend.tryAcquire(new GrantRequest(name, seconds(30),
                    reason -> lossReasons.putIfAbsent(name, reason))).orElseThrow());
        }
        return grants;
    }

    private static ZkGrant grantTo(ZooKeeperLeaseBackend backend, String name) throws Exception {
        return backend.tryAcquire(new GrantRequest(name, seconds(30), reason -> { })).orElse(null);
    }

    private long requestsReceived() throws Exception {
        return ZooKeeperTesting.requestsReceived(server, client);
    }
}
