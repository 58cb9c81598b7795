package dev.lease.samples.billing.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.h2.tools.Server;

/**
 * A ZooKeeper server (curator-test) and an H2 database server, started once per JVM on free ports and shared by every
 * instance of the application this JVM runs. H2 runs in TCP server mode so that a second process (the demo's frozen
 * holder) reaches the same database.
 */
final class EmbeddedServers {

    private static EmbeddedServers shared;

    private final TestingServer zookeeper;
    private final Server h2;

    private EmbeddedServers(TestingServer zookeeper, Server h2) {
        this.zookeeper = zookeeper;
        this.h2 = h2;
    }

    /** The servers of this JVM, started on first use and stopped when the JVM exits. */
    static synchronized EmbeddedServers shared() {
        if (shared == null) {
            shared = start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "embedded-servers-stop"));
        }
        return shared;
    }

    String zookeeperConnectString() {
        return zookeeper.getConnectString();
    }

    String jdbcUrl() {
        // DB_CLOSE_DELAY=-1: the in-memory database lives as long as the server, not as long as one connection.
        return "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:billing;DB_CLOSE_DELAY=-1";
    }

    private static EmbeddedServers start() {
        try {
            // A short tick lets the server accept sessions of a few seconds (its minimum is two ticks).
            InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1,
                    Map.of("maxSessionTimeout", String.valueOf(Duration.ofMinutes(5).toMillis())));
            TestingServer zookeeper = new TestingServer(spec, true);
            Server h2 = Server.createTcpServer("-tcpPort", String.valueOf(freePort()), "-ifNotExists").start();
            return new EmbeddedServers(zookeeper, h2);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start the embedded ZooKeeper and H2 servers: " + ex, ex);
        }
    }

    private void stop() {
        h2.stop();
        try {
            zookeeper.close();
        }
        catch (IOException ex) {
            // The JVM is exiting; the temporary data directory goes with it.
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
