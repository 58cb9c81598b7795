package dev.lease.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.PostgresServer;

/**
 * The three real servers every contender runs against in one run: an in-process ZooKeeper (curator-test), a
 * redis-server child process (lease-test's EmbeddedRedis) and a PostgreSQL child process (lease-test's
 * PostgresServer). Clients made here are closed with the servers.
 */
final class Servers implements AutoCloseable {

    static final Duration ZK_SESSION = Duration.ofSeconds(20);

    final TestingServer zookeeper;
    final int redisPort;
    private final EmbeddedRedis redis;
    final PostgresServer postgres;
    private final java.util.List<AutoCloseable> clients = new java.util.ArrayList<>();

    private Servers(TestingServer zookeeper, EmbeddedRedis redis, PostgresServer postgres) {
        this.zookeeper = zookeeper;
        this.redisPort = redis.port();
        this.redis = redis;
        this.postgres = postgres;
    }

    static Servers start() throws Exception {
        TestingServer zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1,
                Map.of("maxSessionTimeout", "600000", "4lw.commands.whitelist", "*")), true);
        return new Servers(zk, EmbeddedRedis.start(), PostgresServer.start());
    }

    /** A new, connected Curator client: one per simulated application instance. */
    CuratorFramework curator() throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zookeeper.getConnectString())
                .sessionTimeoutMs((int) ZK_SESSION.toMillis()).connectionTimeoutMs(5000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("could not connect to " + zookeeper.getConnectString());
        }
        track(client::close);
        return client;
    }

    /** A new Lettuce connection factory, closed with the server: one per simulated application instance. */
    LettuceConnectionFactory redisFactory() {
        return redis.connectionFactory(redisPort, Duration.ofSeconds(2));
    }

    /** A new connection pool, as an application would have: one per simulated application instance. */
    DataSource pool(String name) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(postgres.dataSource());
        config.setMaximumPoolSize(16);
        config.setPoolName(name);
        HikariDataSource ds = new HikariDataSource(config);
        track(ds::close);
        return ds;
    }

    /** Commands run inside our Lua scripts: counted by commandstats, but no round trip of their own. */
    private static final java.util.Set<String> SCRIPTED = java.util.Set.of("cmdstat_info", "cmdstat_get",
            "cmdstat_pexpire", "cmdstat_del", "cmdstat_publish");

    /**
     * Commands clients have sent the Redis server so far (INFO commandstats), without INFO itself and without the
     * commands our scripts run inside the server. Only valid while no other client sends GET/DEL/PEXPIRE/PUBLISH.
     */
    long redisCommands(LettuceConnectionFactory admin) {
        try (RedisConnection c = admin.getConnection()) {
            Properties stats = c.serverCommands().info("commandstats");
            long total = 0;
            for (String key : stats.stringPropertyNames()) {
                if (key.startsWith("cmdstat_") && !SCRIPTED.contains(key)) {
                    String value = stats.getProperty(key);
                    int at = value.indexOf("calls=");
                    total += Long.parseLong(value.substring(at + 6, value.indexOf(',', at)));
                }
            }
            return total;
        }
    }

    /** Packets the ZooKeeper server has received so far ({@code mntr}). */
    long zookeeperPackets() throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), zookeeper.getPort())) {
            socket.getOutputStream().write("mntr".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("zk_packets_received")) {
                    return Long.parseLong(line.split("\\s+")[1].trim());
                }
            }
        }
        throw new IllegalStateException("mntr gave no zk_packets_received");
    }

    private void track(AutoCloseable client) {
        synchronized (clients) {
            clients.add(client);
        }
    }

    @Override
    public void close() throws Exception {
        synchronized (clients) {
            for (int i = clients.size() - 1; i >= 0; i--) {
                try {
                    clients.get(i).close();
                }
                catch (Exception ex) {
                    // closing order among clients of dead peers is not worth failing the run for
                }
            }
        }
        postgres.close();
        redis.close();
        zookeeper.close();
    }
}
