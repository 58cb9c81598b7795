package dev.lease.samples.reports.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

import redis.embedded.RedisServer;

/**
 * A real redis-server (embedded-redis ships the binary), started once per JVM on a free port, without persistence,
 * and shared by every instance of the application this JVM runs.
 */
final class EmbeddedRedis {

    private static EmbeddedRedis shared;

    private final RedisServer server;
    private final int port;

    private EmbeddedRedis(RedisServer server, int port) {
        this.server = server;
        this.port = port;
    }

    /** The server of this JVM, started on first use and stopped when the JVM exits. */
    static synchronized EmbeddedRedis shared() {
        if (shared == null) {
            shared = start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "embedded-redis-stop"));
        }
        return shared;
    }

    int port() {
        return port;
    }

    private static EmbeddedRedis start() {
        try {
            int port = freePort();
            RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no").build();
            server.start();
            return new EmbeddedRedis(server, port);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not start the embedded redis-server", ex);
        }
    }

    private void stop() {
        try {
            server.stop();
        }
        catch (IOException ex) {
            // The JVM is exiting.
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
