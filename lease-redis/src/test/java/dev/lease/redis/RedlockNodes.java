package dev.lease.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.TcpProxy;

/**
 * N real redis-server processes, each behind a {@link TcpProxy} of its own, for Redlock tests: backends connect
 * through the proxies (so a node can be frozen), the test looks at each server directly (as an operator would).
 */
final class RedlockNodes implements AutoCloseable {

    private final List<EmbeddedRedis> servers = new ArrayList<>();
    private final List<TcpProxy> proxies = new ArrayList<>();
    private final List<StringRedisTemplate> admins = new ArrayList<>();
    private final List<RedlockLeaseBackend> backends = new ArrayList<>();

    RedlockNodes(int count) throws IOException {
        try {
            for (int i = 0; i < count; i++) {
                EmbeddedRedis server = EmbeddedRedis.start();
                servers.add(server);
                proxies.add(new TcpProxy(server.port()));
                admins.add(server.admin());
            }
        }
        catch (IOException | RuntimeException ex) {
            close();
            throw ex;
        }
    }

    int size() {
        return servers.size();
    }

    /** A backend of its own (its own connections through the proxies), closed with the nodes. */
    RedlockLeaseBackend backend(String keyPrefix, Duration nodeTimeout) {
        List<LettuceConnectionFactory> factories = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            factories.add(servers.get(i).connectionFactory(proxies.get(i).port(), EmbeddedRedis.COMMAND_TIMEOUT));
        }
        RedlockLeaseBackend backend = new RedlockLeaseBackend(factories, keyPrefix,
                RedlockLeaseBackend.DEFAULT_CLOCK_DRIFT_FACTOR, nodeTimeout);
        synchronized (backends) {
            backends.add(backend);
        }
        awaitConnectedToEveryNode(backend);
        return backend;
    }

    /**
     * The backend connects to its nodes in the background; on a loaded machine the first request of a test could
     * otherwise meet nodes still connecting. Waits until a probe grant reached every node, then releases it.
     */
    private void awaitConnectedToEveryNode(RedlockLeaseBackend backend) {
        org.awaitility.Awaitility.await().atMost(dev.lease.testing.TestTiming.seconds(30))
                .pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> {
                    String probe = "connected-probe-" + System.nanoTime();
                    var grant = backend.tryAcquire(new dev.lease.spi.GrantRequest(probe, Duration.ofSeconds(10),
                            reason -> { }));
                    if (grant.isEmpty()) {
                        return false;
                    }
                    boolean everyNode = holding(backend.key(probe)) == servers.size();
                    backend.release(grant.get());
                    return everyNode;
                });
    }

    RedlockLeaseBackend backend(String keyPrefix) {
        return backend(keyPrefix, null);
    }

    /** How many nodes hold {@code key}, whoever the owner. */
    int holding(String key) {
        int holding = 0;
        for (int i = 0; i < servers.size(); i++) {
            if (servers.get(i).isRunning() && Boolean.TRUE.equals(admins.get(i).hasKey(key))) {
                holding++;
            }
        }
        return holding;
    }

    /** The owner of {@code key} on node {@code i}, or null. */
    String owner(int i, String key) {
        return admins.get(i).opsForValue().get(key);
    }

    StringRedisTemplate admin(int i) {
        return admins.get(i);
    }

    TcpProxy proxy(int i) {
        return proxies.get(i);
    }

    EmbeddedRedis server(int i) {
        return servers.get(i);
    }

    /** Deletes {@code key} on every running node. */
    void deleteEverywhere(String key) {
        for (int i = 0; i < servers.size(); i++) {
            if (servers.get(i).isRunning()) {
                admins.get(i).delete(key);
            }
        }
    }

    @Override
    public void close() {
        synchronized (backends) {
            backends.forEach(RedlockLeaseBackend::close);
        }
        proxies.forEach(TcpProxy::close);
        for (EmbeddedRedis server : servers) {
            try {
                server.close();
            }
            catch (IOException ignored) {
                // The next test's servers take other ports.
            }
        }
    }
}
