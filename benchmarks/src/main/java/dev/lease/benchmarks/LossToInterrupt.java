package dev.lease.benchmarks;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooKeeper;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.spi.LeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The loss → interrupt rows ({@code --only=loss}): how soon a thread holding a lease is interrupted once the lease is
 * broken from outside, on each store.
 */
final class LossToInterrupt {

    @FunctionalInterface
    private interface Breaker {
        void breakLease(String name) throws Exception;
    }

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;
    private final Servers servers;

    LossToInterrupt(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
        this.servers = harness.servers;
    }

    void run() throws Exception {
        String section = "Loss → interrupt";
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        loss(section, "in-memory (lease revoked)", memory, memory::revoke, false);

        CuratorFramework zk = servers.curator();
        ZooKeeperLeaseBackend zkBackend = harness.own(new ZooKeeperLeaseBackend(zk, "/loss", Servers.ZK_SESSION));
        loss(section, "zookeeper (session expired)", zkBackend, name -> expireSession(zk), true);
        loss(section, "zookeeper (holder znode deleted)", zkBackend,
                name -> zk.delete().forPath("/loss/" + name + "/holder"), false);

        LettuceConnectionFactory factory = servers.redisFactory();
        RedisLeaseBackend redisBackend = harness.own(new RedisLeaseBackend(factory, "loss:"));
        StringRedisTemplate admin = new StringRedisTemplate(servers.redisFactory());
        loss(section, "redis (key deleted)", redisBackend, name -> admin.delete(redisBackend.key(name)), false);

        DataSource pool = servers.pool("loss");
        JdbcLeaseBackend jdbcBackend = new JdbcLeaseBackend(pool);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        loss(section, "jdbc (row taken over)", jdbcBackend,
                name -> jdbc.update("UPDATE lease_lock SET owner = 'thief' WHERE name = ?", name), false);
    }

    /**
     * Holds a lease in a thread that sleeps, breaks the lease from outside, and measures until that thread sees the
     * interrupt: from the break, and from the moment the library learnt of it (the failed renewal returning, or the
     * break itself for a session loss, which ZooKeeper reports at once).
     */
    private void loss(String section, String contender, LeaseBackend<?> backend, Breaker breaker, boolean immediate)
            throws Exception {
        RecordingBackend<?> recording = new RecordingBackend<>(backend);
        Stats fromBreak = new Stats();
        Stats fromDetection = new Stats();
        String failure = null;
        try (LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, recording, LeaseKind.EFFICIENCY, recording)),
                new LeaseDefaults(settings.lossTtl(), null))) {
            for (int i = 0; i < settings.lossIterations() && failure == null; i++) {
                String name = "loss-" + contender.replaceAll("[^a-z]", "") + "-" + i;
                CountDownLatch held = new CountDownLatch(1);
                long[] interruptedAt = {0};
                AtomicReference<Throwable> outcome = new AtomicReference<>();
                Thread holder = new Thread(() -> {
                    try {
                        engine.execute(Ours.spec(name, backend).withTtl(settings.lossTtl())
                                .withRenewEvery(settings.lossRenew()), (Lease lease) -> {
                                    held.countDown();
                                    try {
                                        Thread.sleep(60_000);
                                    }
                                    catch (InterruptedException ex) {
                                        interruptedAt[0] = System.nanoTime();
                                    }
                                    return null;
                                });
                    }
                    catch (Throwable ex) {
                        outcome.set(ex);
                    }
                }, "holder");
                holder.start();
                if (!held.await(30, TimeUnit.SECONDS)) {
                    failure = "lease not acquired";
                    break;
                }
                // Break at a random phase of the renewal cycle.
                Thread.sleep(50 + (long) (Math.random() * settings.lossRenew().toMillis()));
                long brokeAt = System.nanoTime();
                breaker.breakLease(name);
                holder.join(30_000);
                if (interruptedAt[0] == 0 || !(outcome.get() instanceof LeaseLostException)) {
                    failure = "holder not interrupted with LeaseLostException: " + outcome.get();
                    break;
                }
                long detectedAt = immediate ? brokeAt : recording.renewalFailedAt.getOrDefault(name, brokeAt);
                if (detectedAt - interruptedAt[0] > 0) {
                    // Interrupted before a renewal failed: the library learnt of the loss another way, at once (the
                    // ZooKeeper holder's watch fires on the delete), so from the break, not from a later failure.
                    detectedAt = brokeAt;
                }
                fromBreak.add((interruptedAt[0] - brokeAt) / 1000.0);
                fromDetection.add((interruptedAt[0] - Math.max(brokeAt, detectedAt)) / 1000.0);
            }
        }
        String note = failure == null ? null : "FAILED: " + failure;
        harness.addRow(new Row(section, contender, "µs from the library learning of the loss to the interrupt",
                fromDetection.median(), fromDetection.p90(), fromDetection.count(), Double.NaN, note));
        harness.addRow(new Row(section, contender, "µs from the break to the interrupt (renewal every "
                + settings.lossRenew().toMillis() + " ms)", fromBreak.median(), fromBreak.p90(), fromBreak.count(),
                Double.NaN, note));
    }

    /** Expires the client's session on the server, as a real timeout would, and waits for a new session. */
    private void expireSession(CuratorFramework client) throws Exception {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        long expired = zk.getSessionId();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper hijacker = new ZooKeeper(servers.zookeeper.getConnectString(), zk.getSessionTimeout(), event -> {
            if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, expired, zk.getSessionPasswd());
        try {
            connected.await(20, TimeUnit.SECONDS);
        }
        finally {
            hijacker.close();
        }
        Thread reconnect = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                try {
                    if (client.getZookeeperClient().isConnected()
                            && client.getZookeeperClient().getZooKeeper().getSessionId() != expired) {
                        return;
                    }
                    Thread.sleep(10);
                }
                catch (Exception ex) {
                    return;
                }
            }
        });
        reconnect.start();
        reconnect.join();
    }
}
