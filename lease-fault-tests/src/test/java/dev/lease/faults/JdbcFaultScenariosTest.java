package dev.lease.faults;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import javax.sql.DataSource;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.ZooKeeperFaultScenariosTest.HeldAfterGrant;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.spi.GrantFence;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * Fault scenarios on the JDBC backend over PostgreSQL, with the fenced ledger in the same database (as an
 * application would have it): paused holders, killed connections, a database restart, wall-clock jumps and a seeded
 * random mix.
 */
@ExtendWith(MutantRuns.class)
class JdbcFaultScenariosTest {

    private static final Duration TTL = seconds(2);
    private static final Duration WAIT = seconds(3);
    private static final Duration HOLD = Duration.ofMillis(1500);
    private static final Duration BOUND = seconds(30);
    private static final Duration POLL = Duration.ofMillis(5);
    /** Connections of the holders; the fault injector's own connections have another name and are spared. */
    private static final String HOLDERS = "lease-fault-holder";

    /** Restarted on its own data directory and port, so a restart keeps the lease table, the ledger and the URLs. */
    private static PostgresServer postgres;

    @BeforeAll
    static void start() throws Exception {
        postgres = PostgresServer.start();
        new JdbcLeaseBackend(postgres.dataSource()).createSchema();
    }

    @AfterAll
    static void stop() throws IOException {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void pausedHolder() throws Exception {
        String lease = "jdbc-paused";
        try (FaultRun run = new FaultRun("jdbc-paused-holder", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS, ledger(lease));
                LeaseEngine local = engine()) {
            Map<String, String> args = childArgs(lease, TTL, 1);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            // The child first, alone: a worker that releases and takes the lease again at once can starve it.
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 1), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("jdbc-paused-holder")), false);
            for (int round = 0; round < Soak.rounds(2); round++) {
                ZooKeeperFaultScenariosTest.pauseUntilTakenOver(run, child, List.of(rival));
            }
            ZooKeeperFaultScenariosTest.assertStaleWrites(run.finish(), tally);
        }
    }

    /** As {@link #pausedHolder()}, fenced at grant, as {@link ZooKeeperFaultScenariosTest#pausedHolderFencedAtGrant()}. */
    @Test
    void pausedHolderFencedAtGrant() throws Exception {
        String lease = "jdbc-paused-fag";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("jdbc-paused-holder-fenced-at-grant", "jdbc (PostgreSQL)",
                LeaseKind.CORRECTNESS, ledger, true); LeaseEngine local = engine(ledger.fence())) {
            Map<String, String> args = childArgs(lease, TTL, 6);
            args.put("pause-before-write", "true");
            args.put("fence-at-grant", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 6).fencedAtGrant(lease), successor);
            StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("jdbc-paused-holder-fenced-at-grant")), true);
            for (int round = 0; round < Soak.rounds(2); round++) {
                ZooKeeperFaultScenariosTest.pauseUntilTakenOver(run, child, List.of(rival));
            }
            HistoryChecker.Verdict verdict = run.finish();
            ZooKeeperFaultScenariosTest.assertFenceRefused(verdict);
            assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isZero();
        }
    }

    /** The window fence at grant closes, shown open; see {@link ZooKeeperFaultScenariosTest}. */
    @Test
    void pausedHolderWritesAfterTheSuccessorsGrant() throws Exception {
        String lease = "jdbc-paused-window";
        try (FaultRun run = new FaultRun("jdbc-paused-holder-grant-window", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine local = engine()) {
            Map<String, String> args = childArgs(lease, TTL, 7);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 7), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, 2,
                    new Random(Seeds.of("jdbc-paused-holder-grant-window")), false);
            HistoryChecker.Verdict verdict = run.finish();
            ZooKeeperFaultScenariosTest.assertGrantWindowOpen(verdict);
            ZooKeeperFaultScenariosTest.assertStaleWrites(verdict, tally);
        }
    }

    /**
     * Leadership, as {@link ZooKeeperFaultScenariosTest#pausedLeader()}: the leader of an election, in a child JVM, is
     * frozen right before a write of its term until its term's row expired and the in-process instance was elected;
     * let go, it writes with its old term's token, refused by the fence after the new leader's first write. Then the
     * child is frozen wherever it stands in a later term, until taken over. The in-process instance stands by (its
     * election closed) whenever the child must win: it would otherwise win every race against a child that polls.
     */
    @Test
    void pausedLeader() throws Exception {
        String election = "jdbc-leader-paused";
        try (FaultRun run = FaultRun.leadership("jdbc-leader-paused", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(election)); LeaseEngine local = engine()) {
            Map<String, String> args = childArgs(election, TTL, 8);
            args.put("mode", "leader");
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaderWorker rival = run.leader(2, local, config(election, TTL, 8), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("jdbc-leader-paused")), false);
            for (int round = 0; round < Soak.rounds(1); round++) {
                ZooKeeperFaultScenariosTest.pauseUntilTakenOver(run, child, List.of(rival));
            }
            ZooKeeperFaultScenariosTest.assertStaleWrites(run.finish(), tally);
        }
    }

    @Test
    void connectionKill() throws Exception {
        String lease = "jdbc-kill";
        try (FaultRun run = new FaultRun("jdbc-connection-kill", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 2);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 2)),
                    run.worker(2, two, config(lease, TTL, 2)));
            StaleWrites.pausedAcross(run, child, workers, "pg_terminate_backend of every holder connection", () -> {
                new JdbcTemplate(postgres.dataSource()).queryForObject(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
                        Integer.class, HOLDERS);
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                killConnectionsWhileHeld(run, workers);
            }
            run.finish();
        }
    }

    /**
     * A holder whose link to the lease store goes silent (a frozen network, a driver without a socket timeout: its
     * renewal waits for ever) while its link to the resource still works must stop on its own clock: frozen while it
     * stands in its section, it is interrupted before its successor was granted and a ttl more, while the link is
     * still frozen. Without the local deadline ({@link Mutant#NO_LOCAL_DEADLINE}) it would run on until the network
     * came back. A first round freezes a holder right before its write as well, so that a stale write reaches the
     * fence.
     */
    @Test
    void frozenLinkToTheLeaseStore() throws Exception {
        String lease = "jdbc-frozen-link";
        try (FaultRun run = new FaultRun("jdbc-frozen-store-link", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); TcpProxy link1 = new TcpProxy(postgres.port());
                TcpProxy link2 = new TcpProxy(postgres.port());
                LeaseEngine one = engineThrough(link1); LeaseEngine two = engineThrough(link2)) {
            FrozenWrite gate = new FrozenWrite(run.history);
            HeldAfterGrant inSection = HeldAfterGrant.disarmed();
            List<LeaseWorker> workers = List.of(
                    run.worker(1, one, config(lease, TTL, 6), gate.of(1).then(inSection)),
                    run.worker(2, two, config(lease, TTL, 6), gate.of(2).then(inSection)));
            List<TcpProxy> links = List.of(link1, link2);
            StaleWrites.frozenAcross(run, gate, "froze the holder's link to the lease store", victim -> {
                links.get(victim - 1).freeze();
                return () -> links.get(victim - 1).unfreeze();
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                inSection.arm();
                inSection.awaitHeld();
                int victim = workers.get(0).holding() ? 1 : 2;
                TcpProxy link = links.get(victim - 1);
                link.freeze();
                long frozenAt = System.nanoTime();
                run.fault("froze the link of worker " + victim + " to the lease store while it stood in its section",
                        frozenAt);
                try {
                    await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(frozenAt, victim));
                    assertInterruptedSince(run, victim, frozenAt);
                }
                finally {
                    inSection.release();
                    link.unfreeze();
                }
            }
            run.finish();
        }
    }

    @Test
    void databaseRestart() throws Exception {
        String lease = "jdbc-restart";
        try (FaultRun run = new FaultRun("jdbc-database-restart", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 3);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 3)),
                    run.worker(2, two, config(lease, TTL, 3)));
            StaleWrites.pausedAcross(run, child, workers, "stopped PostgreSQL and started it again", () -> {
                postgres.stop();
                postgres.restart();
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(1); round++) {
                restartWhileHeld(run, workers);
            }
            run.finish();
        }
    }

    @Test
    void wallClockJumpsOnTheHolderChangeNothing() throws Exception {
        Path library = Faketime.requireLibrary();
        String lease = "jdbc-clock";
        Duration ttl = seconds(6);
        Path offset = Files.createTempFile("faketime-jdbc", ".offset");
        Faketime.set(offset, "+0");
        try (FaultRun run = new FaultRun("jdbc-wall-clock-jumps", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine local = engine()) {
            Map<String, String> args = childArgs(lease, ttl, 4);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Faketime.environment(library, offset));
            child.awaitWriteReady();
            LeaseWorker rival = run.worker(2, local, config(lease, ttl, 4));
            ClockJumps.afterAStaleWrite(run, child, rival, offset, Soak.rounds(1));
        }
        finally {
            Files.deleteIfExists(offset);
        }
    }

    @Test
    void randomMix() throws Exception {
        String lease = "jdbc-mix";
        Random random = new Random(Seeds.of("jdbc-random-mix"));
        try (FaultRun run = new FaultRun("jdbc-random-mix", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS, ledger(lease));
                LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 5);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 5)),
                    run.worker(2, two, config(lease, TTL, 5)));
            StaleWrites.pausedAcross(run, child, workers, "nothing else", () -> StaleWrites.Undo.NOTHING);
            for (int round = 0; round < Soak.rounds(3); round++) {
                switch (random.nextInt(3)) {
                    case 0 -> ZooKeeperFaultScenariosTest.pauseUntilTakenOver(run, child);
                    case 1 -> killConnectionsWhileHeld(run, workers);
                    default -> restartWhileHeld(run, workers);
                }
            }
            run.finish();
        }
    }

    /** Terminates every holder connection, again and again, until no in-process worker holds the lease. */
    private static void killConnectionsWhileHeld(FaultRun run, List<LeaseWorker> workers) {
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
        JdbcTemplate admin = new JdbcTemplate(postgres.dataSource());
        String kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?";
        run.fault("pg_terminate_backend of every holder connection until the holder let go", System.nanoTime());
        await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> {
            admin.queryForObject(kill, Integer.class, HOLDERS);
            return workers.stream().noneMatch(LeaseWorker::holding);
        });
    }

    /** Stops PostgreSQL while a worker holds the lease, until nobody holds it, then starts it again. */
    private static void restartWhileHeld(FaultRun run, List<LeaseWorker> workers) throws IOException {
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
        postgres.stop();
        run.fault("stopped PostgreSQL until the holder let go, then started it again", System.nanoTime());
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
        postgres.restart();
        long upAt = System.nanoTime();
        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(upAt, -1));
    }

    /**
     * A child holder (worker 3) whose first write is frozen ({@code pause-before-write}), started before the other
     * workers so that it gets the lease first: {@link StaleWrites#pausedAcross} makes it write stale.
     */
    private static ChildHolder pausedChild(FaultRun run, String lease, Duration ttl, long seed) throws Exception {
        Map<String, String> args = childArgs(lease, ttl, seed);
        args.put("pause-before-write", "true");
        ChildHolder child = run.child(3, args, Map.of());
        child.awaitWriteReady();
        return child;
    }

    private static DataSource holderDataSource() {
        return postgres.dataSource(Map.of("ApplicationName", HOLDERS));
    }

    /**
     * The successor's grant came after the store's expiry, which the holder's own deadline precedes: by then the
     * holder was interrupted. A ttl more covers a slow machine's scheduling, not a missing deadline. An assertion, so
     * that a mutant run counts it as a detection.
     */
    private static void assertInterruptedSince(FaultRun run, int worker, long since) {
        try {
            await().atMost(TTL).pollInterval(POLL)
                    .until(() -> run.history.interruptTimesOf(worker).stream().anyMatch(t -> t - since > 0));
        }
        catch (ConditionTimeoutException ex) {
            throw new AssertionError("worker " + worker + " was not interrupted while its link to the lease store "
                    + "was frozen, although another worker was granted its lease", ex);
        }
    }

    /**
     * An engine whose lease store is reached through {@code link} on one reused connection, with no socket timeout:
     * a frozen link leaves its statements waiting until the link comes back.
     */
    private static LeaseEngine engineThrough(TcpProxy link) {
        DataSource store = new ReusedConnections(CrashablePostgres.dataSource(link.port(),
                Map.of("ApplicationName", "lease-fault-frozen-link")));
        return ZooKeeperHolder.engine(new JdbcLeaseBackend(store), LeaseKind.CORRECTNESS);
    }

    private static LeaseEngine engine() {
        return engine(null);
    }

    private static LeaseEngine engine(GrantFence grantFence) {
        return ZooKeeperHolder.engine(new JdbcLeaseBackend(holderDataSource()), LeaseKind.CORRECTNESS, grantFence);
    }

    private static Ledger ledger(String resource) {
        new Ledger(postgres.dataSource(), Ledger.Check.FENCED, resource);
        return Ledger.attach(holderDataSource(), Ledger.Check.FENCED, resource);
    }

    private static LeaseWorker.Config config(String lease, Duration ttl, long seed) {
        return new LeaseWorker.Config(lease, LeaseKind.CORRECTNESS, ttl, WAIT, HOLD, seed);
    }

    private static Map<String, String> childArgs(String lease, Duration ttl, long seed) {
        Map<String, String> args = new HashMap<>();
        args.put("backend", "jdbc");
        args.put("jdbc-url", postgres.jdbcUrl());
        args.put("lease", lease);
        args.put("resource", lease);
        args.put("ledger-url", postgres.jdbcUrl());
        args.put("ttl-ms", Long.toString(ttl.toMillis()));
        args.put("wait-ms", Long.toString(WAIT.toMillis()));
        args.put("hold-ms", "800");
        args.put("seed", Long.toString(seed));
        return args;
    }
}
