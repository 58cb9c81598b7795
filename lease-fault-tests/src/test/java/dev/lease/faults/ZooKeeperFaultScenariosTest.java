package dev.lease.faults;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.lease.LeaseKind;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * Fault scenarios on ZooKeeper, the fenced backend whose lease is a session: paused holders, frozen networks,
 * leader and ensemble loss, wall-clock jumps and a seeded random mix. Every write goes through {@link Ledger} (the
 * real JdbcFence on PostgreSQL) and the history check must find no stale write accepted and nothing lost.
 */
@ExtendWith(MutantRuns.class)
class ZooKeeperFaultScenariosTest {

    private static final int TICK_MS = 250;
    private static final Duration SESSION = seconds(2);
    private static final Duration WAIT = seconds(3);
    /** Long enough that a fault often strikes while the work runs, so interrupt-on-loss is exercised. */
    private static final Duration HOLD = Duration.ofMillis(1500);
    private static final Duration BOUND = seconds(30);
    private static final Duration POLL = Duration.ofMillis(5);

    private static PostgresServer postgres;
    private static TestingServer zookeeper;

    @BeforeAll
    static void start() throws Exception {
        postgres = PostgresServer.start();
        zookeeper = new TestingServer(spec(-1), true);
    }

    @AfterAll
    static void stop() throws Exception {
        if (zookeeper != null) {
            zookeeper.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void pausedHolder() throws Exception {
        String lease = "zk-paused";
        try (FaultRun run = new FaultRun("zookeeper-paused-holder", "zookeeper", LeaseKind.CORRECTNESS, ledger(lease));
                ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION)) {
            Map<String, String> args = childArgs(lease, zookeeper.getConnectString(), SESSION, 1);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            // The child first, alone: a worker that releases and takes the lease again at once can starve it.
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local.engine(), config(lease, SESSION, 2), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("zookeeper-paused-holder")), false);
            for (int round = 0; round < Soak.rounds(2); round++) {
                pauseUntilTakenOver(run, child, List.of(rival));
            }
            assertStaleWrites(run.finish(), tally);
        }
    }

    /**
     * As {@link #pausedHolder()}, with every holder fencing at grant, and the first stale write landing after the
     * successor's grant but before its first write: the window only fence at grant closes.
     */
    @Test
    void pausedHolderFencedAtGrant() throws Exception {
        String lease = "zk-paused-fag";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("zookeeper-paused-holder-fenced-at-grant", "zookeeper",
                LeaseKind.CORRECTNESS, ledger, true);
                ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION,
                        ledger.fence())) {
            Map<String, String> args = childArgs(lease, zookeeper.getConnectString(), SESSION, 8);
            args.put("pause-before-write", "true");
            args.put("fence-at-grant", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local.engine(), config(lease, SESSION, 8).fencedAtGrant(lease),
                    successor);
            StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("zookeeper-paused-holder-fenced-at-grant")), true);
            for (int round = 0; round < Soak.rounds(2); round++) {
                pauseUntilTakenOver(run, child, List.of(rival));
            }
            HistoryChecker.Verdict verdict = run.finish();
            assertFenceRefused(verdict);
            assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isZero();
        }
    }

    /**
     * The window fence at grant closes, shown open: without it, a stale write that lands after the successor's grant
     * but before its first write is accepted, and the table, whose tokens still rise, sees nothing wrong. Its other
     * round lands after the successor's write, so that a fence without the comparison is caught here too.
     */
    @Test
    void pausedHolderWritesAfterTheSuccessorsGrant() throws Exception {
        String lease = "zk-paused-window";
        try (FaultRun run = new FaultRun("zookeeper-paused-holder-grant-window", "zookeeper", LeaseKind.CORRECTNESS,
                ledger(lease));
                ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION)) {
            Map<String, String> args = childArgs(lease, zookeeper.getConnectString(), SESSION, 9);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local.engine(), config(lease, SESSION, 9), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, 2,
                    new Random(Seeds.of("zookeeper-paused-holder-grant-window")), false);
            HistoryChecker.Verdict verdict = run.finish();
            assertGrantWindowOpen(verdict);
            assertStaleWrites(verdict, tally);
        }
    }

    /**
     * Leadership: the leader of an election, in a child JVM, is frozen (SIGSTOP) while it leads and stands right before
     * a write of its term; the in-process instance is elected once the child's session expired, and the child, let go,
     * still believes it leads and writes with its old term's token. After the new leader's first write the fence must
     * refuse it; between the new leader's grant and its first write it is accepted (a fence alone cannot tell: the
     * window fence at grant closes), and both orders occur. Then the child is frozen wherever it stands in a later
     * term, until the other instance took over. The in-process instance stands by (its election closed) whenever the
     * child must win the election. The history check covers the terms: no token twice, none accepted stale, lost terms
     * told, terms never overlapping at the resource, each ended.
     */
    @Test
    void pausedLeader() throws Exception {
        String election = "zk-leader-paused";
        try (FaultRun run = FaultRun.leadership("zookeeper-leader-paused", "zookeeper", LeaseKind.CORRECTNESS,
                ledger(election));
                ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION)) {
            Map<String, String> args = childArgs(election, zookeeper.getConnectString(), SESSION, 10);
            args.put("mode", "leader");
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            // The child first, alone: it leads and stands before the first write of its term.
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaderWorker rival = run.leader(2, local.engine(), config(election, SESSION, 10), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("zookeeper-leader-paused")), false);
            for (int round = 0; round < Soak.rounds(1); round++) {
                pauseUntilTakenOver(run, child, List.of(rival));
            }
            assertStaleWrites(run.finish(), tally);
        }
    }

    @Test
    void networkFreezePastTheSessionTimeout() throws Exception {
        String lease = "zk-freeze";
        try (FaultRun run = new FaultRun("zookeeper-network-freeze", "zookeeper", LeaseKind.CORRECTNESS, ledger(lease));
                TcpProxy proxy1 = new TcpProxy(zookeeper.getPort());
                TcpProxy proxy2 = new TcpProxy(zookeeper.getPort());
                ZooKeeperHolder one = ZooKeeperHolder.connect(proxy1.address(), SESSION);
                ZooKeeperHolder two = ZooKeeperHolder.connect(proxy2.address(), SESSION)) {
            FrozenWrite gate = new FrozenWrite(run.history);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, SESSION, 3), gate.of(1)),
                    run.worker(2, two.engine(), config(lease, SESSION, 3), gate.of(2)));
            List<TcpProxy> proxies = List.of(proxy1, proxy2);
            StaleWrites.frozenAcross(run, gate, "froze the network of the holder", victim -> {
                proxies.get(victim - 1).freeze();
                return () -> proxies.get(victim - 1).unfreeze();
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
                int victim = workers.get(0).holding() ? 0 : 1;
                proxies.get(victim).freeze();
                long frozenAt = System.nanoTime();
                run.fault("froze the network of worker " + (victim + 1), frozenAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(frozenAt, victim + 1));
                proxies.get(victim).unfreeze();
            }
            run.finish();
        }
    }

    @Test
    void wallClockJumpsOnTheHolderChangeNothing() throws Exception {
        Path library = Faketime.requireLibrary();
        String lease = "zk-clock";
        Duration session = seconds(6);
        Path offset = Files.createTempFile("faketime-zk", ".offset");
        Faketime.set(offset, "+0");
        try (FaultRun run = new FaultRun("zookeeper-wall-clock-jumps", "zookeeper", LeaseKind.CORRECTNESS, ledger(lease));
                ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), session)) {
            Map<String, String> args = childArgs(lease, zookeeper.getConnectString(), session, 4);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Faketime.environment(library, offset));
            child.awaitWriteReady();
            LeaseWorker rival = run.worker(2, local.engine(), config(lease, session, 4));
            ClockJumps.afterAStaleWrite(run, child, rival, offset, Soak.rounds(1));
        }
        finally {
            Files.deleteIfExists(offset);
        }
    }

    @Test
    void leaderKill() throws Exception {
        String lease = "zk-leader";
        try (TestingCluster cluster = cluster();
                FaultRun run = new FaultRun("zookeeper-leader-kill", "zookeeper (3 nodes)", LeaseKind.CORRECTNESS,
                        ledger(lease));
                ZooKeeperHolder one = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4));
                ZooKeeperHolder two = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4))) {
            ChildHolder child = pausedChild(run, lease, cluster.getConnectString(), seconds(4), 5);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, seconds(4), 5)),
                    run.worker(2, two.engine(), config(lease, seconds(4), 5)));
            StaleWrites.pausedAcross(run, child, workers, "killed the leader", () -> {
                InstanceSpec leader = leaderOf(cluster);
                cluster.killServer(leader);
                return () -> cluster.restartServer(leader);
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                long before = System.nanoTime();
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(before, -1));
                InstanceSpec leader = leaderOf(cluster);
                cluster.killServer(leader);
                long killedAt = System.nanoTime();
                run.fault("killed the leader " + leader.getConnectString(), killedAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(killedAt, -1));
                cluster.restartServer(leader);
            }
            run.finish();
        }
    }

    @Test
    void fullEnsembleOutage() throws Exception {
        String lease = "zk-ensemble";
        try (TestingCluster cluster = cluster();
                FaultRun run = new FaultRun("zookeeper-full-ensemble-outage", "zookeeper (3 nodes)",
                        LeaseKind.CORRECTNESS, ledger(lease));
                ZooKeeperHolder one = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4));
                ZooKeeperHolder two = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4))) {
            ChildHolder child = pausedChild(run, lease, cluster.getConnectString(), seconds(4), 6);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, seconds(4), 6)),
                    run.worker(2, two.engine(), config(lease, seconds(4), 6)));
            StaleWrites.pausedAcross(run, child, workers, "stopped all three servers, then started them again", () -> {
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.killServer(server);
                }
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.restartServer(server);
                }
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(1); round++) {
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
                long downAt = System.nanoTime();
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.killServer(server);
                }
                run.fault("stopped all three servers", downAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.restartServer(server);
                }
                long upAt = System.nanoTime();
                await().atMost(BOUND.multipliedBy(2)).pollInterval(POLL).until(() -> run.grantedSince(upAt, -1));
            }
            run.finish();
        }
    }

    @Test
    void randomMix() throws Exception {
        String lease = "zk-mix";
        Random random = new Random(Seeds.of("zookeeper-random-mix"));
        try (FaultRun run = new FaultRun("zookeeper-random-mix", "zookeeper", LeaseKind.CORRECTNESS, ledger(lease));
                TcpProxy proxy1 = new TcpProxy(zookeeper.getPort());
                TcpProxy proxy2 = new TcpProxy(zookeeper.getPort());
                ZooKeeperHolder one = ZooKeeperHolder.connect(proxy1.address(), SESSION);
                ZooKeeperHolder two = ZooKeeperHolder.connect(proxy2.address(), SESSION)) {
            ChildHolder child = pausedChild(run, lease, zookeeper.getConnectString(), SESSION, 7);
            List<TcpProxy> proxies = List.of(proxy1, proxy2);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, SESSION, 7)),
                    run.worker(2, two.engine(), config(lease, SESSION, 7)));
            StaleWrites.pausedAcross(run, child, workers, "nothing else", () -> StaleWrites.Undo.NOTHING);
            for (int round = 0; round < Soak.rounds(4); round++) {
                int victim = random.nextInt(2);
                TcpProxy proxy = proxies.get(victim);
                long at = System.nanoTime();
                switch (random.nextInt(6)) {
                    case 0 -> pauseUntilTakenOver(run, child);
                    case 1 -> {
                        proxy.freeze();
                        run.fault("froze the network of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, victim + 1));
                        proxy.unfreeze();
                    }
                    case 2 -> {
                        proxy.drop(true);
                        run.fault("dropped the packets of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, victim + 1));
                        proxy.drop(false);
                        proxy.reset();
                    }
                    case 3 -> {
                        proxy.reset();
                        run.fault("reset the connections of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                    }
                    case 4 -> {
                        proxy.delay(Duration.ofMillis(400));
                        run.fault("delayed the network of worker " + (victim + 1) + " by 400 ms", at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                        proxy.delay(Duration.ZERO);
                    }
                    default -> {
                        zookeeper.restart();
                        run.fault("restarted the ZooKeeper server", at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                    }
                }
            }
            run.finish();
        }
    }

    /**
     * Pauses the child while it holds the lease, until another worker got it, then resumes it. The run's in-process
     * workers stand by until the child holds: re-acquiring at once, they could win every race against it.
     */
    static void pauseUntilTakenOver(FaultRun run, ChildHolder child) throws Exception {
        pauseUntilTakenOver(run, child, run.workers());
    }

    /** Same, with {@code rivals} standing by until the child holds the lease, so that they cannot starve it. */
    static void pauseUntilTakenOver(FaultRun run, ChildHolder child, List<? extends Worker> rivals) throws Exception {
        long grants = run.grantsOf(child.worker());
        rivals.forEach(rival -> rival.standBy(true));
        try {
            await().atMost(BOUND).pollInterval(POLL)
                    .until(() -> run.grantsOf(child.worker()) > grants && child.holding());
        }
        finally {
            rivals.forEach(rival -> rival.standBy(false));
        }
        child.pause();
        long pausedAt = System.nanoTime();
        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(pausedAt, child.worker()));
        child.resume();
        run.fault("SIGSTOP of child holder " + child.worker() + " until taken over, then SIGCONT", System.nanoTime());
    }

    /** Without fence at grant the stale write after the successor's grant was accepted, seen by the new measure only. */
    static void assertGrantWindowOpen(HistoryChecker.Verdict verdict) {
        assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isPositive();
        assertThat(verdict.staleWritesAccepted()).as("stale writes accepted after a successor's write").isZero();
    }

    /**
     * The stale writes of {@link StaleWrites#pausedWrites} are in the table's numbers: those after the successor's
     * write refused, those between its grant and its write counted, none accepted after a successor's write.
     */
    static void assertStaleWrites(HistoryChecker.Verdict verdict, StaleWrites.Tally tally) {
        assertFenceRefused(verdict);
        assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant")
                .isGreaterThanOrEqualTo(tally.beforeTheSuccessorsWrite());
        assertThat(verdict.writesRejected()).as("stale writes refused")
                .isGreaterThanOrEqualTo(tally.afterTheSuccessorsWrite());
    }

    /**
     * A child holder (worker 3) whose first write is frozen ({@code pause-before-write}), started before the other
     * workers so that it gets the lease first: {@link StaleWrites#pausedAcross} makes it write stale.
     */
    private static ChildHolder pausedChild(FaultRun run, String lease, String connect, Duration session, long seed)
            throws Exception {
        Map<String, String> args = childArgs(lease, connect, session, seed);
        args.put("pause-before-write", "true");
        ChildHolder child = run.child(3, args, Map.of());
        child.awaitWriteReady();
        return child;
    }

    /** The run saw the fence refuse at least one stale write and accept none. */
    static void assertFenceRefused(HistoryChecker.Verdict verdict) {
        assertThat(verdict.writesRejected()).as("stale writes refused").isGreaterThanOrEqualTo(1);
        assertThat(verdict.staleWritesAccepted()).as("stale writes accepted").isZero();
    }

    /**
     * Holds a worker's first write, after its grant, until released: the successor of a paused holder waits there so
     * that the holder's stale write lands after the successor's grant and before its first write. Interruptible: a
     * successor that loses its lease meanwhile stops waiting.
     */
    static final class HeldAfterGrant implements LeaseWorker.BeforeWrite {

        private volatile CountDownLatch held = new CountDownLatch(1);
        private volatile CountDownLatch released = new CountDownLatch(1);
        private final AtomicBoolean armed;
        private volatile long token = -1;

        /** Holds the worker's first write. */
        HeldAfterGrant() {
            this(true);
        }

        private HeldAfterGrant(boolean armed) {
            this.armed = new AtomicBoolean(armed);
        }

        /** Holds nothing until {@link #arm()}. */
        static HeldAfterGrant disarmed() {
            return new HeldAfterGrant(false);
        }

        @Override
        public void beforeWrite(long token) throws InterruptedException {
            if (!armed.compareAndSet(true, false)) {
                return;
            }
            this.token = token;
            held.countDown();
            released.await();
        }

        /** Waits until the worker holds a grant and waits before its first write; returns the grant's token. */
        long awaitHeld() throws InterruptedException {
            if (!held.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the successor was not granted the lease within " + BOUND);
            }
            return token;
        }

        void release() {
            released.countDown();
        }

        /** Holds the worker's next write the same way; only while the worker does not wait here. */
        void arm() {
            held = new CountDownLatch(1);
            released = new CountDownLatch(1);
            armed.set(true);
        }
    }

    private static Ledger ledger(String resource) {
        return new Ledger(postgres.dataSource(), Ledger.Check.FENCED, resource);
    }

    private static LeaseWorker.Config config(String lease, Duration ttl, long seed) {
        return new LeaseWorker.Config(lease, LeaseKind.CORRECTNESS, ttl, WAIT, HOLD, seed);
    }

    private static Map<String, String> childArgs(String lease, String connect, Duration session, long seed) {
        Map<String, String> args = new HashMap<>();
        args.put("backend", "zookeeper");
        args.put("connect", connect);
        args.put("session-ms", Long.toString(session.toMillis()));
        args.put("root", ZooKeeperHolder.ROOT);
        args.put("lease", lease);
        args.put("resource", lease);
        args.put("ledger-url", postgres.jdbcUrl());
        args.put("ttl-ms", Long.toString(session.toMillis()));
        args.put("wait-ms", Long.toString(WAIT.toMillis()));
        args.put("hold-ms", "800");
        args.put("seed", Long.toString(seed));
        return args;
    }

    static InstanceSpec spec(int serverId) {
        return new InstanceSpec(null, -1, -1, -1, true, serverId, TICK_MS, -1,
                Map.of("maxSessionTimeout", "600000", "4lw.commands.whitelist", "*"));
    }

    private static TestingCluster cluster() throws Exception {
        List<InstanceSpec> specs = IntStream.rangeClosed(1, 3).mapToObj(ZooKeeperFaultScenariosTest::spec).toList();
        TestingCluster cluster = new TestingCluster(new ArrayList<>(specs));
        cluster.start();
        return cluster;
    }

    private static InstanceSpec leaderOf(TestingCluster cluster) {
        return await().atMost(BOUND).pollInterval(Duration.ofMillis(50)).until(() -> cluster.getInstances().stream()
                .filter(s -> srvr(s.getPort()).contains("Mode: leader")).findFirst().orElse(null), s -> s != null);
    }

    private static String srvr(int port) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
        catch (IOException ex) {
            return "";
        }
    }
}
