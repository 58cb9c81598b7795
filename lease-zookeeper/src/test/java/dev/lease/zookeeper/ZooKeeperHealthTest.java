package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.testing.TcpProxy;

/** {@link ZooKeeperLeaseBackend#checkHealth}: the connection state, on a real server of its own per test. */
class ZooKeeperHealthTest {

    private static final String ROOT = "/health-leases";
    /** Short, so that a frozen link turns SUSPENDED within a test (after about two thirds of it). */
    private static final Duration SESSION_TIMEOUT = seconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

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

    @Test
    void aConnectedClientIsHealthyWithItsStateAndWhereTheLeasesLive() throws Exception {
        ZooKeeperLeaseBackend backend = backend(server.getConnectString());

        Map<String, Object> details = backend.checkHealth(TIMEOUT);

        assertThat(details).containsEntry("state", "CONNECTED")
                .containsEntry("connectString", server.getConnectString())
                .containsEntry("root", ROOT);
    }

    @Test
    void aFrozenLinkIsSuspendedAndNotHealthyUntilItHeals() throws Exception {
        TcpProxy proxy = new TcpProxy(server.getPort());
        closeables.add(proxy);
        ZooKeeperLeaseBackend backend = backend(proxy.address());
        closeables.add(proxy::unfreeze); // first thing on closing: let the client's calls end
        assertThat(backend.checkHealth(TIMEOUT)).containsEntry("state", "CONNECTED");

        proxy.freeze();

        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
                assertThatThrownBy(() -> backend.checkHealth(TIMEOUT)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("SUSPENDED").hasMessageContaining(proxy.address()));

        proxy.unfreeze();

        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> backend.checkHealth(TIMEOUT).get("state").equals("RECONNECTED"));
    }

    @Test
    void aStoppedServerIsNotHealthy() throws Exception {
        ZooKeeperLeaseBackend backend = backend(server.getConnectString());

        server.stop();

        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
                assertThatThrownBy(() -> backend.checkHealth(TIMEOUT)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("no lease can be granted"));
    }

    @Test
    void aClosedClientIsNotHealthy() throws Exception {
        CuratorFramework client = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT);
        closeables.add(backend);

        client.close();

        assertThatThrownBy(() -> backend.checkHealth(TIMEOUT)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("STOPPED");
    }

    private ZooKeeperLeaseBackend backend(String connectString) throws Exception {
        CuratorFramework client = ZooKeeperTesting.client(connectString, SESSION_TIMEOUT);
        closeables.add(client);
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT);
        closeables.add(backend);
        return backend;
    }
}
