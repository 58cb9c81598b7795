package dev.lease.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.spi.LeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The rows of the cost of holding many leases ({@code --only=hold}): round trips and process CPU per renewal tick
 * while thousands of leases are held.
 */
final class HoldCost {

    @FunctionalInterface
    interface Counter {
        long roundTrips() throws Exception;
    }

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;
    private final Servers servers;

    HoldCost(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
        this.servers = harness.servers;
    }

    void run() throws Exception {
        CuratorFramework zk = servers.curator();
        LettuceConnectionFactory redis = servers.redisFactory();
        LettuceConnectionFactory redisAdmin = servers.redisFactory();
        CountingDataSource pool = new CountingDataSource(servers.pool("hold"));
        new JdbcLeaseBackend(pool).createSchema();
        for (int count : settings.holdCounts()) {
            if (harness.stores("zk")) {
                ZooKeeperLeaseBackend zkBackend = harness.own(new ZooKeeperLeaseBackend(zk, "/hold", Servers.ZK_SESSION));
                hold("zookeeper", count, zkBackend, servers::zookeeperPackets, settings.holdTtl(), settings.holdRenew(),
                        "round trips = packets the server received (incl. session pings); CPU includes the in-process "
                                + "ZooKeeper server");
            }
            if (harness.stores("redis")) {
                RedisLeaseBackend redisBackend = harness.own(new RedisLeaseBackend(redis, "hold:"));
                hold("redis", count, redisBackend, () -> servers.redisCommands(redisAdmin), settings.holdTtl(),
                        settings.holdRenew(),
                        "round trips = commands the clients sent (INFO commandstats, less the GET/PEXPIRE/DEL/PUBLISH our scripts run inside Redis)");
            }
            if (harness.stores("jdbc")) {
                hold("jdbc", count, new JdbcLeaseBackend(pool), pool::roundTrips, settings.holdTtl(),
                        settings.holdRenew(), "round trips = statements + commits through the pool");
            }
        }
    }

    static String holdSection(int count) {
        return "Cost of holding " + String.format(Locale.ROOT, "%,d", count) + " leases";
    }

    void hold(String backendName, int count, LeaseBackend<?> backend, Counter counter, Duration ttl,
            Duration renew, String note) throws Exception {
        String section = holdSection(count);
        RecordingBackend<?> recording = new RecordingBackend<>(backend);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        List<Lease> leases = java.util.Collections.synchronizedList(new ArrayList<>());
        String failure = null;
        double ticks = 0;
        long trips = 0;
        long cpu = 0;
        long lost = 0;
        try (LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, recording, LeaseKind.EFFICIENCY, recording)),
                new LeaseDefaults(ttl, renew))) {
            long acquireStart = System.nanoTime();
            Throwable error = Acquirers.run(count, 4, i -> leases.add(engine.acquire(
                    Ours.spec("hold-" + count + "-" + i, backend).withTtl(ttl).withRenewEvery(renew))));
            if (error != null) {
                failure = Benchmarks.describe(error);
            }
            else {
                double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;
                System.out.printf(Locale.ROOT, "%s: %d leases acquired in %.1f s%n", backendName, count, acquireSeconds);
                Thread.sleep(renew.toMillis());
                long renewals0 = recording.renewals.sum();
                long trips0 = counter.roundTrips();
                long cpu0 = os.getProcessCpuTime();
                Thread.sleep(renew.toMillis() * settings.holdTicks());
                cpu = os.getProcessCpuTime() - cpu0;
                trips = counter.roundTrips() - trips0;
                ticks = (recording.renewals.sum() - renewals0) / (double) count;
                lost = leases.stream().filter(l -> !l.isValid()).count();
            }
            leases.parallelStream().forEach(Lease::close);
        }
        if (failure == null && lost > 0) {
            failure = lost + " of " + count + " leases were lost while held";
        }
        String rowNote = (failure == null ? "" : "FAILED: " + failure + "; ") + note
                + String.format(Locale.ROOT, "; %.1f ticks of %d ms measured (ttl %d ms)", ticks, renew.toMillis(),
                        ttl.toMillis());
        harness.addRow(new Row(section, backendName, "round trips per renewal tick (all leases)", trips / ticks,
                Double.NaN, 1, Double.NaN, rowNote));
        harness.addRow(new Row(section, backendName, "round trips per lease per tick", trips / ticks / count, Double.NaN,
                1, Double.NaN, null));
        harness.addRow(new Row(section, backendName, "process CPU ms per renewal tick", cpu / 1e6 / ticks, Double.NaN, 1,
                Double.NaN, null));
    }
}
