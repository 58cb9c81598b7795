package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TcpProxy;

/**
 * A grant request in flight while its session expires: Curator retries the {@code multi} on the new session, so the
 * holder is created by a session the request did not start on, after the caller gave up. Nothing of it may block the
 * name: another instance gets it within one session timeout.
 */
class ZooKeeperSessionChangeTest {

    private static final Log log = LogFactory.getLog(ZooKeeperSessionChangeTest.class);
    private static final String ROOT = "/session-change-leases";
    private static final Duration SESSION_TIMEOUT = seconds(3);

    private TestingServer server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = ZooKeeperTesting.startServer();
    }

    @AfterEach
    void stopAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        server.close();
    }

    /**
     * The link drops (bytes vanish, nothing is closed) just as {@code acquire(waitFor 1s)} goes out; the caller gives
     * up; the session expires on the server; the link heals and Curator retries the {@code multi} on a new session,
     * which commits the late grant. Before the fix, the grant named the session read before the request, its release
     * sent nothing ("granted in an earlier session") and the live session's holder blocked the name while the
     * process lived.
     */
    @ParameterizedTest
    @EnumSource(ZooKeeperTokenSource.class)
    void aGrantRetriedOnANewSessionAfterTheCallerGaveUpLeavesTheNameFree(ZooKeeperTokenSource tokens)
            throws Exception {
        String name = "retried-" + tokens.name().toLowerCase();
        TcpProxy proxy = new TcpProxy(server.getPort());
        closeables.add(proxy);
        CuratorFramework cutOffClient = client(proxy.address());
        CuratorFramework otherClient = client(server.getConnectString());
        LeaseEngine cutOff = engine(backend(cutOffClient, tokens));
        LeaseEngine other = engine(backend(otherClient, tokens));
        LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT);
        long firstToken;
        try (Lease first = cutOff.acquire(spec)) {
            firstToken = first.token().value(); // the name's znode exists: the next grant is the multi alone
        }
        int versionBefore = otherClient.checkExists().forPath(ROOT + "/" + name).getVersion();
        long sessionBefore = cutOffClient.getZookeeperClient().getZooKeeper().getSessionId();

        proxy.drop(true);
        assertThat(cutOffClient.getZookeeperClient().isConnected()).as("still looks connected: the request is sent")
                .isTrue();
        assertThatThrownBy(() -> cutOff.acquire(spec.withWaitFor(Duration.ofSeconds(1))))
                .isInstanceOf(LeaseUnavailableException.class)
                .rootCause().hasMessageContaining("did not answer the grant request within");
        ZooKeeperTesting.expireSession(cutOffClient, server.getConnectString());
        proxy.drop(false);
        proxy.reset();

        // Curator's retry commits the grant on the new session: the counter moves on.
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> otherClient.checkExists()
                .forPath(ROOT + "/" + name).getVersion() > versionBefore);
        long sessionAfter = cutOffClient.getZookeeperClient().getZooKeeper().getSessionId();
        assertThat(sessionAfter).as("the request outlived its session").isNotEqualTo(sessionBefore);
        Stat holder = otherClient.checkExists().forPath(ROOT + "/" + name + "/holder");
        log.info("Late grant committed; holder now " + (holder == null ? "gone" : "owned by session 0x"
                + Long.toHexString(holder.getEphemeralOwner())) + ", request sent on session 0x"
                + Long.toHexString(sessionBefore) + ", current session 0x" + Long.toHexString(sessionAfter));

        try (Lease successor = other.acquire(spec.withWaitFor(SESSION_TIMEOUT))) {
            assertThat(successor.token().value()).isGreaterThan(firstToken);
        }
        assertThat(cutOffClient.getZookeeperClient().isConnected()
                && cutOffClient.getZookeeperClient().getZooKeeper().getSessionId() == sessionAfter)
                .as("the cut-off instance's new session is alive: the name was freed, not expired").isTrue();
        try (Lease again = cutOff.acquire(spec.withWaitFor(SESSION_TIMEOUT))) {
            assertThat(again.isValid()).as("the cut-off instance gets the name again on its new session").isTrue();
        }
    }

    /**
     * Curator gives up on a session it has not heard from for the session timeout and opens a new one, while the
     * server may keep the old one (and its holders) a little longer. A holder of ours is told apart by the instance id
     * it carries, not by the session: an abandoned request's holder goes whichever session owns it, and another
     * backend's holder, even on our own session, stays.
     */
    @ParameterizedTest
    @EnumSource(ZooKeeperTokenSource.class)
    void anAbandonRemovesOurHolderWhicheverSessionOwnsItAndNoOneElses(ZooKeeperTokenSource tokens) throws Exception {
        String name = "abandoned-" + tokens.name().toLowerCase();
        CuratorFramework ourClient = client(server.getConnectString());
        CuratorFramework oldSession = client(server.getConnectString());
        ZooKeeperLeaseBackend ours = backend(ourClient, tokens);
        ZooKeeperLeaseBackend neighbour = backend(ourClient, tokens);
        GrantRequest request = new GrantRequest(name, SESSION_TIMEOUT, reason -> { });
        ours.release(ours.tryAcquire(request).orElseThrow()); // the name's znodes exist
        String holder = ROOT + "/" + name + "/holder";

        oldSession.create().withMode(CreateMode.EPHEMERAL).forPath(holder, ours.instanceId());
        ours.abandon(request);
        assertThat(ourClient.checkExists().forPath(holder)).as("our holder on another session").isNull();

        ZkGrant held = neighbour.tryAcquire(request).orElseThrow();
        ours.abandon(request);
        assertThat(ourClient.checkExists().forPath(holder)).as("another backend's holder on our session").isNotNull();
        assertThat(neighbour.renew(held)).isTrue();
        neighbour.release(held);
    }

    private CuratorFramework client(String connectString) throws InterruptedException {
        CuratorFramework client = ZooKeeperTesting.client(connectString, SESSION_TIMEOUT);
        closeables.add(client);
        return client;
    }

    private ZooKeeperLeaseBackend backend(CuratorFramework client, ZooKeeperTokenSource tokens) {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT, tokens, null);
        closeables.add(backend);
        return backend;
    }

    private LeaseEngine engine(LeaseBackend<?> backend) {
        LeaseEngine engine = ZooKeeperTesting.engine(backend);
        closeables.add(engine);
        return engine;
    }
}
