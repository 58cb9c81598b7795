package dev.lease.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import redis.embedded.RedisServer;

/**
 * A real redis-server on a free port, without persistence (a restart starts empty), and Lettuce connection
 * factories with short command timeouts, so that a stopped server turns into failed commands quickly. Bring
 * {@code com.github.codemonstur:embedded-redis} and {@code spring-data-redis} with Lettuce yourself.
 */
public final class EmbeddedRedis implements AutoCloseable {

    /** Command timeout of every factory made here. */
    public static final Duration COMMAND_TIMEOUT = TestTiming.millis(500);

    private final int port;
    private final RedisServer server;
    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    private EmbeddedRedis(int port, RedisServer server) {
        this.port = port;
        this.server = server;
    }

    /**
     * Starts a server on a free loopback port.
     *
     * @return the running server, to close
     * @throws IOException when redis-server could not start
     */
    public static EmbeddedRedis start() throws IOException {
        int port = freePort();
        RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                .setting("save \"\"").setting("appendonly no").build();
        server.start();
        return new EmbeddedRedis(port, server);
    }

    /** The server's port. */
    public int port() {
        return port;
    }

    /** Stops the server; every key is gone once it starts again. */
    public void stop() throws IOException {
        server.stop();
    }

    /** Whether the server is running (not stopped). */
    public boolean isRunning() {
        return server.isActive();
    }

    /** Starts the stopped server again, empty, on the same port. */
    public void restart() throws IOException {
        server.start();
    }

    /** A new connection factory of its own, closed with this server. */
    public LettuceConnectionFactory connectionFactory() {
        return connectionFactory(port, COMMAND_TIMEOUT);
    }

    /**
     * A new connection factory of its own to {@code 127.0.0.1:port} (this server's port, or a proxy in front of it),
     * closed with this server.
     *
     * @param port the port to connect to
     * @param commandTimeout how long a command may take before it fails
     * @return the started factory
     */
    public LettuceConnectionFactory connectionFactory(int port, Duration commandTimeout) {
        LettuceClientConfiguration client = LettuceClientConfiguration.builder()
                .commandTimeout(commandTimeout).shutdownTimeout(Duration.ZERO).build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration("127.0.0.1", port), client);
        factory.afterPropertiesSet();
        factory.start();
        synchronized (factories) {
            factories.add(factory);
        }
        return factory;
    }

    /** A template on its own connection, as an operator's redis-cli would be. */
    public StringRedisTemplate admin() {
        return new StringRedisTemplate(connectionFactory());
    }

    /**
     * redis-server's own process id, as it reports it (embedded-redis does not expose the process), to pause it for
     * real ({@code kill -STOP}); it changes on restart.
     */
    public long pid() {
        Properties info = admin().execute((RedisCallback<Properties>) c -> c.serverCommands().info("server"));
        return Long.parseLong(info.getProperty("process_id").trim());
    }

    @Override
    public void close() throws IOException {
        synchronized (factories) {
            factories.forEach(LettuceConnectionFactory::destroy);
            factories.clear();
        }
        if (server.isActive()) {
            server.stop();
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
