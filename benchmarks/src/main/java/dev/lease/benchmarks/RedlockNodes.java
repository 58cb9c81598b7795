package dev.lease.benchmarks;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.redis.RedlockLeaseBackend;
import dev.lease.testing.EmbeddedRedis;

/**
 * Three independent redis-server processes for the Redlock rows, started only when those rows run; our
 * {@link RedlockLeaseBackend} and Redisson's {@code RedissonRedLock} connect to the same three, directly (no proxy).
 */
final class RedlockNodes implements AutoCloseable {

    static final int COUNT = 3;

    private final List<EmbeddedRedis> servers = new ArrayList<>();

    RedlockNodes() throws IOException {
        try {
            for (int i = 0; i < COUNT; i++) {
                servers.add(EmbeddedRedis.start());
            }
        }
        catch (IOException | RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /** Our backend over connections of its own to every node: one per simulated application instance. */
    RedlockLeaseBackend backend(String keyPrefix) {
        List<LettuceConnectionFactory> factories = new ArrayList<>();
        for (EmbeddedRedis server : servers) {
            factories.add(server.connectionFactory(server.port(), Duration.ofSeconds(2)));
        }
        // Node timeout null: 5 % of the ttl, the default a user gets.
        return new RedlockLeaseBackend(factories, keyPrefix, RedlockLeaseBackend.DEFAULT_CLOCK_DRIFT_FACTOR, null);
    }

    /**
     * Redisson's {@code RedissonRedLock} over one client per node, its watchdog on (no lease time), as its
     * documentation shows: one per simulated application instance. Deprecated by Redisson, still shipped.
     */
    @SuppressWarnings("deprecation")
    Locker redissonRedLock(List<AutoCloseable> closeables) {
        List<RedissonClient> clients = new ArrayList<>();
        for (EmbeddedRedis server : servers) {
            Config config = new Config();
            config.useSingleServer().setAddress("redis://127.0.0.1:" + server.port());
            RedissonClient client = Redisson.create(config);
            closeables.add(client::shutdown);
            clients.add(client);
        }
        return key -> {
            RLock[] locks = clients.stream().map(c -> c.getLock("redisson-redlock:" + key)).toArray(RLock[]::new);
            RedissonRedLock lock = new RedissonRedLock(locks);
            lock.lock();
            return lock::unlock;
        };
    }

    @Override
    public void close() {
        for (EmbeddedRedis server : servers) {
            try {
                server.close();
            }
            catch (IOException ex) {
                System.err.println("closing a Redlock node: " + ex);
            }
        }
    }
}
