package dev.lease.benchmarks;

import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The contenders on ZooKeeper, Redis, PostgreSQL and Redlock (ours and the peers', two instances each), and the order
 * of their uncontended and handover rows ({@code --only=uncontended}; the etcd ones are {@link EtcdBenchmarks}').
 */
final class UncontendedAndHandover {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;
    private final Servers servers;
    private final Uncontended uncontended;
    private final Handover handover;

    UncontendedAndHandover(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
        this.servers = harness.servers;
        this.uncontended = new Uncontended(harness, settings);
        this.handover = new Handover(harness, settings);
    }

    void run() throws Exception {
        // ZooKeeper
        CuratorFramework zk1 = servers.curator();
        CuratorFramework zk2 = servers.curator();
        Ours zkOurs1 = harness.own(new Ours(new ZooKeeperLeaseBackend(zk1, "/leases", Servers.ZK_SESSION)));
        Ours zkOurs2 = harness.own(new Ours(new ZooKeeperLeaseBackend(zk2, "/leases", Servers.ZK_SESSION)));
        List<Contender> zk = List.of(
                Contender.of("lease LeaseTemplate", zkOurs1.template(), zkOurs2.template()),
                new Contender("lease @Leased", null, null, zkOurs1.leased("u-leased")),
                Contender.of("Curator InterProcessMutex", Peers.curator(zk1), Peers.curator(zk2)),
                Contender.of("Spring Integration ZookeeperLockRegistry", Peers.springIntegrationZookeeper(zk1),
                        Peers.springIntegrationZookeeper(zk2)),
                Contender.of("lease ZooKeeperLeaseBackend alone (no engine)", zkOurs1.backendAlone(),
                        zkOurs2.backendAlone()),
                Contender.of("plain Curator (floor)", ZooKeeperFloor.locker(zk1),
                        ZooKeeperFloor.locker(zk2)));
        // Redis
        LettuceConnectionFactory r1 = servers.redisFactory();
        LettuceConnectionFactory r2 = servers.redisFactory();
        Ours redisOurs1 = harness.own(new Ours(new RedisLeaseBackend(r1, "lease:")));
        Ours redisOurs2 = harness.own(new Ours(new RedisLeaseBackend(r2, "lease:")));
        List<Contender> redis = List.of(
                Contender.of("lease LeaseTemplate", redisOurs1.template(), redisOurs2.template()),
                new Contender("lease @Leased", null, null, redisOurs1.leased("u-leased")),
                Contender.of("Redisson RLock", Peers.redisson(servers.redisPort, harness.closeables),
                        Peers.redisson(servers.redisPort, harness.closeables)),
                Contender.of("Spring Integration RedisLockRegistry", Peers.springIntegrationRedis(r1),
                        Peers.springIntegrationRedis(r2)),
                Contender.of("ShedLock RedisLockProvider", Peers.shedLockRedis(r1), Peers.shedLockRedis(r2)));
        // JDBC on PostgreSQL
        // Counted, so the handover can show what waiting costs the database.
        CountingDataSource pool1 = new CountingDataSource(servers.pool("instance-1"));
        CountingDataSource pool2 = new CountingDataSource(servers.pool("instance-2"));
        java.util.function.LongSupplier jdbcTrips = () -> pool1.roundTrips() + pool2.roundTrips();
        JdbcLeaseBackend jdbc1 = new JdbcLeaseBackend(pool1);
        jdbc1.createSchema();
        Peers.createSpringIntegrationTable(pool1);
        Ours jdbcOurs1 = harness.own(new Ours(jdbc1));
        Ours jdbcOurs2 = harness.own(new Ours(new JdbcLeaseBackend(pool2)));
        List<Contender> jdbc = List.of(
                Contender.of("lease LeaseTemplate", jdbcOurs1.template(), jdbcOurs2.template()),
                new Contender("lease @Leased", null, null, jdbcOurs1.leased("u-leased")),
                Contender.of("ShedLock JdbcTemplateLockProvider", Peers.shedLockJdbc(pool1), Peers.shedLockJdbc(pool2)),
                Contender.of("Spring Integration JdbcLockRegistry", Peers.springIntegrationJdbc(pool1),
                        Peers.springIntegrationJdbc(pool2)));

        boolean doZk = harness.stores("zk");
        boolean doRedis = harness.stores("redis");
        boolean doJdbc = harness.stores("jdbc");
        boolean doRedlock = harness.stores("redlock");
        List<Contender> redlock = doRedlock ? redlockContenders() : List.of();
        if (doZk) {
            uncontended.run("ZooKeeper: uncontended acquire+release", zk, this::zookeeperRequests,
                    "ZooKeeper requests per acquire+release (server side; pings and the count's own, ~0.03, included)");
        }
        if (doRedis) {
            // Not counted: Redis commandstats cannot tell a peer's DEL from the DEL our release script runs inside Redis.
            uncontended.run("Redis: uncontended acquire+release", redis, null, null);
        }
        if (doJdbc) {
            uncontended.run("JDBC (PostgreSQL): uncontended acquire+release", jdbc, jdbcTrips,
                    "database round trips per acquire+release (statements + commits)");
        }
        if (doRedlock) {
            uncontended.run("Redlock (3 nodes): uncontended acquire+release", redlock, null, null);
        }
        for (int waiters : settings.smoke() ? new int[] {8} : new int[] {1, 8, 64}) {
            if (doZk) {
                handover.run("ZooKeeper: handover, " + waiters + " waiter(s)", zk, waiters, this::zookeeperRequests,
                        "ZooKeeper requests per handover (server side, all sessions; pings included)");
            }
            if (doRedis) {
                handover.run("Redis: handover, " + waiters + " waiter(s)", redis, waiters, null);
            }
            if (doJdbc) {
                handover.run("JDBC (PostgreSQL): handover, " + waiters + " waiter(s)", jdbc, waiters, jdbcTrips);
            }
            // Issue 34 asks for 8 waiters; one size keeps the three extra servers' share of a full run short.
            if (doRedlock && waiters == 8) {
                handover.run("Redlock (3 nodes): handover, " + waiters + " waiter(s)", redlock, waiters, null);
            }
        }
    }

    /** Ours and Redisson's RedLock, two instances each, on the same three fresh redis-servers. */
    private List<Contender> redlockContenders() throws Exception {
        RedlockNodes nodes = harness.own(new RedlockNodes());
        Ours ours1 = harness.own(new Ours(nodes.backend("lease:")));
        Ours ours2 = harness.own(new Ours(nodes.backend("lease:")));
        return List.of(
                Contender.of("lease LeaseTemplate", ours1.template(), ours2.template()),
                new Contender("lease @Leased", null, null, ours1.leased("u-leased")),
                Contender.of("Redisson RedissonRedLock", nodes.redissonRedLock(harness.closeables),
                        nodes.redissonRedLock(harness.closeables)));
    }

    private long zookeeperRequests() {
        try {
            return servers.zookeeperPackets();
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
