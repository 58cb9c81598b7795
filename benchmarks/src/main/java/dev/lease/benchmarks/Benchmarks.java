package dev.lease.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooKeeper;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

import dev.lease.Lease;
import dev.lease.LeaseLostException;
import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.spi.LeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The benchmark harness: starts ZooKeeper, Redis and PostgreSQL once, then measures our library and its peers on
 * them, interleaved round by round so that drifting machine load hits every contender alike, and writes medians
 * and ratios as Markdown. {@code --smoke} runs every contender a handful of times only.
 */
public final class Benchmarks {

    /** How much to measure. */
    record Settings(boolean smoke, int warmup, int rounds, int batch, Duration handoverSlice, int handoverRounds,
            int lossIterations, Duration lossTtl, Duration lossRenew, int[] holdCounts,
            Duration holdTtl, Duration holdRenew, int holdTicks, int overheadBatch) {

        static Settings fullRun() {
            return new Settings(false, 300, 15, 40, Duration.ofMillis(700), 3, 12, Duration.ofMillis(1500),
                    Duration.ofMillis(500), new int[] {1_000, 10_000}, Duration.ofSeconds(6),
                    Duration.ofSeconds(2), 3, 20_000);
        }

        static Settings smokeRun() {
            return new Settings(true, 5, 3, 3, Duration.ofMillis(400), 1, 1, Duration.ofMillis(1500),
                    Duration.ofMillis(500), new int[] {20}, Duration.ofMillis(1500), Duration.ofMillis(500), 1, 200);
        }
    }

    private final Settings settings;
    private final Servers servers;
    private String only = "";
    private final List<Row> rows = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private Benchmarks(Settings settings, Servers servers) {
        this.settings = settings;
        this.servers = servers;
    }

    public static void main(String[] args) throws Exception {
        boolean smoke = List.of(args).contains("--smoke");
        Path out = Path.of(List.of(args).stream().filter(a -> a.startsWith("--out=")).map(a -> a.substring(6))
                .findFirst().orElse(Files.isDirectory(Path.of("benchmarks")) ? "benchmarks/target/results.md"
                        : "results.md"));
        String loadBefore = load();
        Instant started = Instant.now();
        String only = List.of(args).stream().filter(a -> a.startsWith("--only=")).map(a -> a.substring(7))
                .findFirst().orElse("uncontended,loss,hold,overhead");
        List<Row> rows = run(smoke ? Settings.smokeRun() : Settings.fullRun(), only);
        String markdown = Report.markdown(rows, loadBefore, load(), Duration.between(started, Instant.now()));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, markdown);
        System.out.println(markdown);
        System.out.println("Written to " + out.toAbsolutePath());
        System.exit(0);
    }

    /** Runs every comparison and returns its rows. */
    static List<Row> run(Settings settings) throws Exception {
        return run(settings, "uncontended,loss,hold,overhead");
    }

    /** Runs the named comparisons (uncontended (with handover), loss, hold, overhead) and returns their rows. */
    static List<Row> run(Settings settings, String only) throws Exception {
        try (Servers servers = Servers.start()) {
            Benchmarks b = new Benchmarks(settings, servers);
            b.only = only;
            try {
                if (only.contains("uncontended")) {
                    b.uncontendedAndHandover();
                }
                if (only.contains("loss")) {
                    b.lossToInterrupt();
                }
                if (only.contains("hold")) {
                    b.holdCost();
                }
                if (b.stores("etcd") && (only.contains("uncontended") || only.contains("hold"))) {
                    new EtcdBenchmarks(b, settings).run(only.contains("uncontended"), only.contains("hold"));
                }
                if (only.contains("overhead")) {
                    b.interceptorOverhead();
                }
            }
            finally {
                for (int i = b.closeables.size() - 1; i >= 0; i--) {
                    try {
                        b.closeables.get(i).close();
                    }
                    catch (Exception ex) {
                        System.err.println("closing: " + ex);
                    }
                }
            }
            return b.rows;
        }
    }

    // ---- uncontended acquire+release and handover -------------------------------------------------------------

    /** One contender of a comparison: a locker per simulated instance (two), the first used when uncontended. */
    record Contender(String name, Locker first, Locker second, Runnable leasedOp) {

        static Contender of(String name, Locker first, Locker second) {
            return new Contender(name, first, second, null);
        }
    }

    private void uncontendedAndHandover() throws Exception {
        // ZooKeeper
        CuratorFramework zk1 = servers.curator();
        CuratorFramework zk2 = servers.curator();
        Ours zkOurs1 = own(new Ours(new ZooKeeperLeaseBackend(zk1, "/leases", Servers.ZK_SESSION)));
        Ours zkOurs2 = own(new Ours(new ZooKeeperLeaseBackend(zk2, "/leases", Servers.ZK_SESSION)));
        List<Contender> zk = List.of(
                Contender.of("lease LeaseTemplate", zkOurs1.template(), zkOurs2.template()),
                new Contender("lease @Leased", null, null, zkOurs1.leased("u-leased")),
                Contender.of("Curator InterProcessMutex", Peers.curator(zk1), Peers.curator(zk2)),
                Contender.of("Spring Integration ZookeeperLockRegistry", Peers.springIntegrationZookeeper(zk1),
                        Peers.springIntegrationZookeeper(zk2)));
        // Redis
        LettuceConnectionFactory r1 = servers.redisFactory();
        LettuceConnectionFactory r2 = servers.redisFactory();
        Ours redisOurs1 = own(new Ours(new RedisLeaseBackend(r1, "lease:")));
        Ours redisOurs2 = own(new Ours(new RedisLeaseBackend(r2, "lease:")));
        List<Contender> redis = List.of(
                Contender.of("lease LeaseTemplate", redisOurs1.template(), redisOurs2.template()),
                new Contender("lease @Leased", null, null, redisOurs1.leased("u-leased")),
                Contender.of("Redisson RLock", Peers.redisson(servers.redisPort, closeables),
                        Peers.redisson(servers.redisPort, closeables)),
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
        Ours jdbcOurs1 = own(new Ours(jdbc1));
        Ours jdbcOurs2 = own(new Ours(new JdbcLeaseBackend(pool2)));
        List<Contender> jdbc = List.of(
                Contender.of("lease LeaseTemplate", jdbcOurs1.template(), jdbcOurs2.template()),
                new Contender("lease @Leased", null, null, jdbcOurs1.leased("u-leased")),
                Contender.of("ShedLock JdbcTemplateLockProvider", Peers.shedLockJdbc(pool1), Peers.shedLockJdbc(pool2)),
                Contender.of("Spring Integration JdbcLockRegistry", Peers.springIntegrationJdbc(pool1),
                        Peers.springIntegrationJdbc(pool2)));

        boolean doZk = stores("zk");
        boolean doRedis = stores("redis");
        boolean doJdbc = stores("jdbc");
        boolean doRedlock = stores("redlock");
        List<Contender> redlock = doRedlock ? redlockContenders() : List.of();
        if (doZk) {
            uncontended("ZooKeeper: uncontended acquire+release", zk, this::zookeeperRequests,
                    "ZooKeeper requests per acquire+release (server side; pings and the count's own, ~0.03, included)");
        }
        if (doRedis) {
            // Not counted: Redis commandstats cannot tell a peer's DEL from the DEL our release script runs inside Redis.
            uncontended("Redis: uncontended acquire+release", redis, null, null);
        }
        if (doJdbc) {
            uncontended("JDBC (PostgreSQL): uncontended acquire+release", jdbc, jdbcTrips,
                    "database round trips per acquire+release (statements + commits)");
        }
        if (doRedlock) {
            uncontended("Redlock (3 nodes): uncontended acquire+release", redlock, null, null);
        }
        for (int waiters : settings.smoke() ? new int[] {8} : new int[] {1, 8, 64}) {
            if (doZk) {
                handover("ZooKeeper: handover, " + waiters + " waiter(s)", zk, waiters, null);
            }
            if (doRedis) {
                handover("Redis: handover, " + waiters + " waiter(s)", redis, waiters, null);
            }
            if (doJdbc) {
                handover("JDBC (PostgreSQL): handover, " + waiters + " waiter(s)", jdbc, waiters, jdbcTrips);
            }
            // Issue 34 asks for 8 waiters; one size keeps the three extra servers' share of a full run short.
            if (doRedlock && waiters == 8) {
                handover("Redlock (3 nodes): handover, " + waiters + " waiter(s)", redlock, waiters, null);
            }
        }
    }

    /** Ours and Redisson's RedLock, two instances each, on the same three fresh redis-servers. */
    private List<Contender> redlockContenders() throws Exception {
        RedlockNodes nodes = own(new RedlockNodes());
        Ours ours1 = own(new Ours(nodes.backend("lease:")));
        Ours ours2 = own(new Ours(nodes.backend("lease:")));
        return List.of(
                Contender.of("lease LeaseTemplate", ours1.template(), ours2.template()),
                new Contender("lease @Leased", null, null, ours1.leased("u-leased")),
                Contender.of("Redisson RedissonRedLock", nodes.redissonRedLock(closeables),
                        nodes.redissonRedLock(closeables)));
    }

    /** Whether the run covers {@code store}: "--only=uncontended,jdbc" limits it to some stores; all by default. */
    boolean stores(String store) {
        return !only.matches(".*\\b(zk|redis|jdbc|redlock|etcd)\\b.*") || only.matches(".*\\b" + store + "\\b.*");
    }

    void addRow(Row row) {
        rows.add(row);
    }

    <T extends AutoCloseable> T own(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private long zookeeperRequests() {
        try {
            return servers.zookeeperPackets();
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /**
     * Times each contender's acquire+release; with {@code trips}, also counts the store round trips of the timed
     * operations (the count is read between batches, so it does not add to their time).
     */
    void uncontended(String section, List<Contender> contenders, java.util.function.LongSupplier trips,
            String tripsMetric) {
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        Map<Contender, long[]> counted = new LinkedHashMap<>();
        contenders.forEach(c -> counted.put(c, new long[2]));
        Map<Contender, String> failures = new LinkedHashMap<>();
        List<Contender> alive = new ArrayList<>(contenders);
        for (Contender c : contenders) {
            stats.put(c, new Stats());
            try {
                for (int i = 0; i < settings.warmup(); i++) {
                    op(c);
                }
            }
            catch (Throwable ex) {
                failures.put(c, describe(ex));
                alive.remove(c);
            }
        }
        for (int round = 0; round < settings.rounds(); round++) {
            for (int k = 0; k < alive.size(); k++) {
                // Rotate the order each round so that no contender always runs right after the same neighbour.
                Contender c = alive.get((k + round) % alive.size());
                if (failures.containsKey(c)) {
                    continue;
                }
                try {
                    long tripsBefore = trips == null ? 0 : trips.getAsLong();
                    long begin = System.nanoTime();
                    for (int i = 0; i < settings.batch(); i++) {
                        op(c);
                    }
                    stats.get(c).add((System.nanoTime() - begin) / 1000.0 / settings.batch());
                    if (trips != null) {
                        counted.get(c)[0] += trips.getAsLong() - tripsBefore;
                        counted.get(c)[1] += settings.batch();
                    }
                }
                catch (Throwable ex) {
                    failures.put(c, describe(ex));
                }
            }
        }
        addRows(section, "µs per acquire+release", contenders, stats, failures);
        if (trips != null) {
            for (Contender c : contenders) {
                long[] n = counted.get(c);
                rows.add(new Row(section, c.name(), tripsMetric, n[0] / (double) Math.max(1, n[1]), Double.NaN,
                        stats.get(c).count(), Double.NaN, null));
            }
        }
    }

    private static void op(Contender c) throws Exception {
        if (c.leasedOp() != null) {
            c.leasedOp().run();
        }
        else {
            c.first().acquire("u-" + c.name().replaceAll("[^A-Za-z]", "")).close();
        }
    }

    private void addRows(String section, String metric, List<Contender> contenders, Map<Contender, Stats> stats,
            Map<Contender, String> failures) {
        double reference = stats.get(contenders.get(0)).median();
        for (Contender c : contenders) {
            Stats s = stats.get(c);
            String failure = failures.get(c);
            rows.add(new Row(section, c.name(), metric, s.median(), s.p90(), s.count(), s.median() / reference,
                    failure == null ? null : "FAILED: " + failure));
        }
    }

    private void handover(String section, List<Contender> all, int waiters, java.util.function.LongSupplier trips)
            throws Exception {
        handover(section, all, waiters, trips, "database round trips per handover (all threads)");
    }

    void handover(String section, List<Contender> all, int waiters, java.util.function.LongSupplier trips,
            String tripsMetric) throws Exception {
        List<Contender> contenders = all.stream().filter(c -> c.first() != null && c.first().canWait()).toList();
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        Map<Contender, String> failures = new LinkedHashMap<>();
        Map<Contender, long[]> statements = new LinkedHashMap<>();
        contenders.forEach(c -> stats.put(c, new Stats()));
        contenders.forEach(c -> statements.put(c, new long[1]));
        for (int round = 0; round < settings.handoverRounds(); round++) {
            for (int k = 0; k < contenders.size(); k++) {
                Contender c = contenders.get((k + round) % contenders.size());
                if (!failures.containsKey(c)) {
                    long before = trips == null ? 0 : trips.getAsLong();
                    String failure = handoverSlice(c, waiters, "h" + waiters + "-r" + round, stats.get(c));
                    statements.get(c)[0] += trips == null ? 0 : trips.getAsLong() - before;
                    if (failure != null) {
                        failures.put(c, failure);
                    }
                }
            }
        }
        addRows(section, "µs from release to the next waiter holding it", contenders, stats, failures);
        if (trips != null) {
            for (Contender c : contenders) {
                rows.add(new Row(section, c.name(), tripsMetric,
                        statements.get(c)[0] / (double) Math.max(1, stats.get(c).count()), Double.NaN,
                        stats.get(c).count(), Double.NaN, null));
            }
        }
    }

    /** How long each holder keeps the lock in the handover measurement. */
    static final long HANDOVER_HOLD_MILLIS = 5;

    /** Volatile state shared by the threads of one handover slice. */
    private static final class Baton {
        volatile long releasedAt;
        volatile long releasedBy = -1;
        volatile long generation;
        volatile boolean stop;
        final java.util.concurrent.atomic.AtomicInteger holders = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
    }

    /**
     * {@code waiters + 1} threads, split over the two instances, take turns: each acquires, notes how long it took
     * since the previous holder (another thread) released, holds for {@value #HANDOVER_HOLD_MILLIS} ms, releases, and rejoins the queue only after someone else
     * got the lock, so every sample is a real handover to a waiter.
     */
    private String handoverSlice(Contender c, int waiters, String key, Stats stats) throws InterruptedException {
        Baton baton = new Baton();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t <= waiters; t++) {
            Locker locker = t % 2 == 0 ? c.first() : c.second();
            Thread thread = new Thread(() -> {
                long self = Thread.currentThread().getId();
                try {
                    while (!baton.stop) {
                        Locker.Held held = locker.acquire(key);
                        long now = System.nanoTime();
                        if (baton.holders.incrementAndGet() != 1) {
                            baton.overlaps.incrementAndGet();
                        }
                        if (baton.releasedBy != -1 && baton.releasedBy != self && !baton.stop) {
                            stats.add((now - baton.releasedAt) / 1000.0);
                        }
                        long generation = ++baton.generation;
                        // Hold a little, so that the waiters are really waiting (parked on a watch, a subscription or
                        // a poll) when the release comes, rather than racing the release with a fresh attempt.
                        Thread.sleep(HANDOVER_HOLD_MILLIS);
                        baton.releasedBy = self;
                        baton.holders.decrementAndGet();
                        baton.releasedAt = System.nanoTime();
                        held.close();
                        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                        while (baton.generation == generation && !baton.stop && System.nanoTime() < waitUntil) {
                            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                        }
                    }
                }
                catch (Throwable ex) {
                    error.compareAndSet(null, ex);
                    baton.stop = true;
                }
            }, "handover-" + t);
            thread.setDaemon(true);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        Thread.sleep(settings.handoverSlice().toMillis());
        baton.stop = true;
        for (Thread thread : threads) {
            thread.join(60_000);
            if (thread.isAlive()) {
                return "a waiter did not finish within 60 s";
            }
        }
        if (baton.overlaps.get() > 0) {
            return "mutual exclusion broken: " + baton.overlaps.get() + " times a thread acquired while another held";
        }
        return error.get() == null ? null : describe(error.get());
    }

    // ---- loss -> interrupt ---------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Breaker {
        void breakLease(String name) throws Exception;
    }

    private void lossToInterrupt() throws Exception {
        String section = "Loss → interrupt";
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        loss(section, "in-memory (lease revoked)", memory, memory::revoke, false);

        CuratorFramework zk = servers.curator();
        ZooKeeperLeaseBackend zkBackend = own(new ZooKeeperLeaseBackend(zk, "/loss", Servers.ZK_SESSION));
        loss(section, "zookeeper (session expired)", zkBackend, name -> expireSession(zk), true);
        loss(section, "zookeeper (holder znode deleted)", zkBackend,
                name -> zk.delete().forPath("/loss/" + name + "/holder"), false);

        LettuceConnectionFactory factory = servers.redisFactory();
        RedisLeaseBackend redisBackend = own(new RedisLeaseBackend(factory, "loss:"));
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
                fromBreak.add((interruptedAt[0] - brokeAt) / 1000.0);
                fromDetection.add((interruptedAt[0] - Math.max(brokeAt, detectedAt)) / 1000.0);
            }
        }
        String note = failure == null ? null : "FAILED: " + failure;
        rows.add(new Row(section, contender, "µs from the library learning of the loss to the interrupt",
                fromDetection.median(), fromDetection.p90(), fromDetection.count(), Double.NaN, note));
        rows.add(new Row(section, contender, "µs from the break to the interrupt (renewal every "
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

    // ---- cost of holding many leases -----------------------------------------------------------------------------

    @FunctionalInterface
    interface Counter {
        long roundTrips() throws Exception;
    }

    private void holdCost() throws Exception {
        CuratorFramework zk = servers.curator();
        LettuceConnectionFactory redis = servers.redisFactory();
        LettuceConnectionFactory redisAdmin = servers.redisFactory();
        CountingDataSource pool = new CountingDataSource(servers.pool("hold"));
        new JdbcLeaseBackend(pool).createSchema();
        for (int count : settings.holdCounts()) {
            if (stores("zk")) {
                ZooKeeperLeaseBackend zkBackend = own(new ZooKeeperLeaseBackend(zk, "/hold", Servers.ZK_SESSION));
                hold("zookeeper", count, zkBackend, servers::zookeeperPackets, settings.holdTtl(), settings.holdRenew(),
                        "round trips = packets the server received (incl. session pings); CPU includes the in-process "
                                + "ZooKeeper server");
            }
            if (stores("redis")) {
                RedisLeaseBackend redisBackend = own(new RedisLeaseBackend(redis, "hold:"));
                hold("redis", count, redisBackend, () -> servers.redisCommands(redisAdmin), settings.holdTtl(),
                        settings.holdRenew(),
                        "round trips = commands the clients sent (INFO commandstats, less the GET/PEXPIRE/DEL/PUBLISH our scripts run inside Redis)");
            }
            if (stores("jdbc")) {
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
                failure = describe(error);
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
        rows.add(new Row(section, backendName, "round trips per renewal tick (all leases)", trips / ticks,
                Double.NaN, 1, Double.NaN, rowNote));
        rows.add(new Row(section, backendName, "round trips per lease per tick", trips / ticks / count, Double.NaN,
                1, Double.NaN, null));
        rows.add(new Row(section, backendName, "process CPU ms per renewal tick", cpu / 1e6 / ticks, Double.NaN, 1,
                Double.NaN, null));
    }

    // ---- interceptor overhead ------------------------------------------------------------------------------------

    private void interceptorOverhead() throws Exception {
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        Ours ours = own(new Ours(backend));
        Runnable leased = ours.leased("overhead");
        LeasedService.Plain plain = new LeasedService.Plain();
        Locker template = ours.template();
        List<Contender> contenders = List.of(
                new Contender("LeaseTemplate acquire+close (in-memory)", null, null, () -> {
                    try {
                        template.acquire("overhead-template").close();
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                }),
                new Contender("@Leased call (in-memory)", null, null, leased),
                new Contender("plain call, no lease", null, null, () -> plain.work("overhead")));
        Settings s = settings;
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        contenders.forEach(c -> stats.put(c, new Stats()));
        int batch = s.overheadBatch();
        for (Contender c : contenders) {
            for (int i = 0; i < batch; i++) {
                c.leasedOp().run();
            }
        }
        for (int round = 0; round < s.rounds(); round++) {
            for (int k = 0; k < contenders.size(); k++) {
                Contender c = contenders.get((k + round) % contenders.size());
                long begin = System.nanoTime();
                for (int i = 0; i < batch; i++) {
                    c.leasedOp().run();
                }
                stats.get(c).add((System.nanoTime() - begin) / 1000.0 / batch);
            }
        }
        addRows("Interceptor overhead (in-memory backend)", "µs per call", contenders, stats, Map.of());
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    private static String describe(Throwable ex) {
        String text = ex.toString();
        return text.length() > 200 ? text.substring(0, 200) + "…" : text;
    }

    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        }
        catch (IOException ex) {
            return "unknown";
        }
    }
}
