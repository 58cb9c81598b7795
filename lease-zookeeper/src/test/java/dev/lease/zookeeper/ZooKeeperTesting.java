package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;

import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.LeaseBackend;

/** Real ZooKeeper servers and clients for the backend tests. */
public final class ZooKeeperTesting {

    /** A short tick so that short session timeouts are allowed (the server's minimum is two ticks). */
    static final int TICK_MS = 250;

    private static final Pattern CONNECTION = Pattern.compile("recved=(\\d+),.*?sid=0x([0-9a-f]+)");

    private ZooKeeperTesting() {
    }

    /** A standalone server on a free port, with session timeouts from 2 ticks up to 10 minutes allowed. */
    public static TestingServer startServer() throws Exception {
        return new TestingServer(spec(-1), true);
    }

    static InstanceSpec spec(int serverId) {
        return new InstanceSpec(null, -1, -1, -1, true, serverId, TICK_MS, -1,
                Map.of("maxSessionTimeout", String.valueOf(Duration.ofMinutes(10).toMillis()),
                        "4lw.commands.whitelist", "*"));
    }

    /** Sends a ZooKeeper "four letter word" admin command to a server and returns its answer. */
    static String fourLetterWord(int port, String word) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    /**
     * The requests {@code server} has received on {@code client}'s current session so far (its {@code cons} admin
     * command), pings included; the admin command's own connection is not counted.
     */
    static long requestsReceived(TestingServer server, CuratorFramework client) throws Exception {
        String sid = Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
        Matcher m = CONNECTION.matcher(fourLetterWord(server.getPort(), "cons"));
        while (m.find()) {
            if (m.group(2).equals(sid)) {
                return Long.parseLong(m.group(1));
            }
        }
        throw new AssertionError("session 0x" + sid + " not found in the server's connections");
    }

    /** A started client, connected before it is returned. */
    static CuratorFramework client(String connectString, Duration sessionTimeout) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) seconds(2).toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        assertThat(client.blockUntilConnected((int) seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .as("connected to " + connectString).isTrue();
        return client;
    }

    /** An engine with the standard defaults that routes both kinds to {@code backend}; the caller closes it. */
    static LeaseEngine engine(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    /**
     * Expires {@code client}'s session on the server right now, as a session timeout would: another connection
     * takes the session over with its id and password and closes it, so the server deletes its ephemeral znodes and
     * the client is told its session expired (Curator then opens a new one). Curator 5's {@code KillSession} only
     * fakes the expiry on the client side, which leaves the server-side session (and its znodes) alive.
     */
    static void expireSession(CuratorFramework client, String connectString) throws Exception {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper hijacker = new ZooKeeper(connectString, zk.getSessionTimeout(), event -> {
            if (event.getState() == KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(connected.await(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).as("took the session over").isTrue();
        }
        finally {
            hijacker.close();
        }
    }

    /**
     * Like {@link #expireSession} and then waits until Curator has opened a new session, so that what follows does
     * not pay for the reconnection inside its own timing.
     */
    static void expireSessionAndReconnect(CuratorFramework client, String connectString) throws Exception {
        long expired = client.getZookeeperClient().getZooKeeper().getSessionId();
        expireSession(client, connectString);
        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> client.getZookeeperClient()
                .isConnected() && client.getZookeeperClient().getZooKeeper().getSessionId() != expired);
    }
}
