package dev.lease.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper server (curator-test's {@code TestingServer}) on a free port, with a short tick so that the
 * short sessions of timing tests and demos are allowed: the server accepts session timeouts from two ticks
 * ({@value #TICK_MILLIS} ms each) up to five minutes. Bring {@code org.apache.curator:curator-test} yourself.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {

    /** The server's tick in milliseconds; its shortest session is two ticks. */
    public static final int TICK_MILLIS = 250;

    /** The longest session the server accepts. */
    public static final Duration MAX_SESSION_TIMEOUT = Duration.ofMinutes(5);

    private static EmbeddedZooKeeper shared;

    private final TestingServer server;

    private EmbeddedZooKeeper(TestingServer server) {
        this.server = server;
    }

    /**
     * Starts a server on a free loopback port, with a temporary data directory deleted on {@link #close()}.
     *
     * @return the running server, to close
     * @throws IllegalStateException when ZooKeeper could not start
     */
    public static EmbeddedZooKeeper start() {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, -1,
                Map.of("maxSessionTimeout", String.valueOf(MAX_SESSION_TIMEOUT.toMillis())));
        try {
            return new EmbeddedZooKeeper(new TestingServer(spec, true));
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start an embedded ZooKeeper server: " + ex, ex);
        }
    }

    /**
     * One server for the whole JVM, started on first use and closed when the JVM exits, not with any application
     * context: for a demo that runs several application instances in one JVM, which must share the server.
     *
     * @return the JVM's server
     */
    public static synchronized EmbeddedZooKeeper shared() {
        if (shared == null) {
            EmbeddedZooKeeper started = start();
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "embedded-zookeeper-stop"));
            shared = started;
        }
        return shared;
    }

    /**
     * Where clients connect.
     *
     * @return {@code 127.0.0.1:port}
     */
    public String connectString() {
        return server.getConnectString();
    }

    /**
     * The server's port, e.g. the target of a {@link TcpProxy}.
     *
     * @return the port
     */
    public int port() {
        return server.getPort();
    }

    /** Stops the server and deletes its data directory. */
    @Override
    public void close() {
        try {
            server.close();
        }
        catch (IOException ex) {
            // Best effort: the data directory is a temporary one.
        }
    }
}
