package dev.lease.samples.billing.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

import org.h2.tools.Server;

import dev.lease.testing.EmbeddedZooKeeper;

/**
 * A ZooKeeper server (lease-test's {@link EmbeddedZooKeeper}, which allows sessions of a few seconds) and an H2
 * database server, started once per JVM on free ports and shared by every instance of the application this JVM
 * runs. H2 runs in TCP server mode so that a second process (the demo's frozen holder) reaches the same database.
 */
final class EmbeddedServers {

    private static EmbeddedServers shared;

    private final EmbeddedZooKeeper zookeeper;
    private final Server h2;

    private EmbeddedServers(EmbeddedZooKeeper zookeeper, Server h2) {
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
        return zookeeper.connectString();
    }

    String jdbcUrl() {
        // DB_CLOSE_DELAY=-1: the in-memory database lives as long as the server, not as long as one connection.
        return "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:billing;DB_CLOSE_DELAY=-1";
    }

    private static EmbeddedServers start() {
        try {
            EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start();
            Server h2 = Server.createTcpServer("-tcpPort", String.valueOf(freePort()), "-ifNotExists").start();
            return new EmbeddedServers(zookeeper, h2);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start the embedded ZooKeeper and H2 servers: " + ex, ex);
        }
    }

    private void stop() {
        h2.stop();
        zookeeper.close();
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
