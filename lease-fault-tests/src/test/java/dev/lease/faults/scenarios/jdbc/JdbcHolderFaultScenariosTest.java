package dev.lease.faults.scenarios.jdbc;

import static dev.lease.faults.harness.StaleWrites.assertFenceRefused;
import static dev.lease.faults.harness.StaleWrites.assertGrantWindowOpen;
import static dev.lease.faults.harness.StaleWrites.assertStaleWrites;
import static dev.lease.faults.harness.StaleWrites.pauseUntilTakenOver;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.ClockJumps;
import dev.lease.faults.harness.Faketime;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.PausedChild;
import dev.lease.faults.harness.Restarts;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * Fault scenarios on the JDBC backend over PostgreSQL that strike the holder: paused holders and leaders (SIGSTOP of
 * a child JVM), their stale writes before and after a successor's grant, and wall-clock jumps.
 */
class JdbcHolderFaultScenariosTest extends JdbcScenarios {

    @Test
    void pausedHolder() throws Exception {
        String lease = "jdbc-paused";
        try (FaultRun run = new FaultRun("jdbc-paused-holder", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS, ledger(lease));
                LeaseEngine local = engine()) {
            PausedChild paused = PausedChild.start(run, local, childArgs(lease, TTL, 1), config(lease, TTL, 1));
            StaleWrites.Tally tally = paused.staleWrites(run, Soak.rounds(2), "jdbc-paused-holder", false);
            for (int round = 0; round < Soak.rounds(2); round++) {
                pauseUntilTakenOver(run, paused.child(), List.of(paused.rival()));
            }
            assertStaleWrites(run.finish(), tally);
        }
    }

    /** As {@link #pausedHolder()}, fenced at grant, as {@code ZooKeeperHolderFaultScenariosTest.pausedHolderFencedAtGrant}. */
    @Test
    void pausedHolderFencedAtGrant() throws Exception {
        String lease = "jdbc-paused-fag";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("jdbc-paused-holder-fenced-at-grant", "jdbc (PostgreSQL)",
                LeaseKind.CORRECTNESS, ledger, true); LeaseEngine local = engine(ledger.fence())) {
            Map<String, String> args = childArgs(lease, TTL, 6);
            args.put("fence-at-grant", "true");
            PausedChild paused = PausedChild.start(run, local, args, config(lease, TTL, 6).fencedAtGrant(lease));
            paused.staleWrites(run, Soak.rounds(2), "jdbc-paused-holder-fenced-at-grant", true);
            for (int round = 0; round < Soak.rounds(2); round++) {
                pauseUntilTakenOver(run, paused.child(), List.of(paused.rival()));
            }
            HistoryChecker.Verdict verdict = run.finish();
            assertFenceRefused(verdict);
            assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isZero();
        }
    }

    /**
     * The soak's finding, made deterministic: the child holder is stopped (SIGSTOP) inside its fenced transaction,
     * right after its fence advance locked the fence row, and stays stopped until a successor wrote. A stopped process
     * keeps its connection, so only the fence's idle bound ends that transaction; without it every successor's fence at
     * grant waited for the lock until its lease ran out, grant after grant, for as long as the holder stayed stopped.
     * Then one stale write as in {@link #pausedHolderFencedAtGrant()}: the child, frozen right before a write until
     * a successor wrote, must be refused.
     */
    @Test
    void holderStoppedInsideItsFencedTransaction() throws Exception {
        String lease = "jdbc-stopped-in-tx";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("jdbc-holder-stopped-inside-its-transaction", "jdbc (PostgreSQL)",
                LeaseKind.CORRECTNESS, ledger, true); LeaseEngine local = engine(ledger.fence())) {
            Map<String, String> args = childArgs(lease, TTL, 13);
            args.put("fence-at-grant", "true");
            args.put("pause-inside-transaction", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            // Disarmed: the successor must write while the child stands stopped; pausedWrites arms it later.
            HeldAfterGrant successor = HeldAfterGrant.disarmed();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 13).fencedAtGrant(lease), successor);
            StaleWrites.stopInsideItsTransaction(run, child);
            StaleWrites.pausedWrites(run, child, rival, successor, 1, new Random(Seeds.of(lease)), true);
            HistoryChecker.Verdict verdict = run.finish();
            assertFenceRefused(verdict);
            assertThat(verdict.staleWritesAfterGrant()).as("stale writes accepted after a successor's grant").isZero();
        }
    }

    /** The window fence at grant closes, shown open; see {@code ZooKeeperHolderFaultScenariosTest}. */
    @Test
    void pausedHolderWritesAfterTheSuccessorsGrant() throws Exception {
        String lease = "jdbc-paused-window";
        try (FaultRun run = new FaultRun("jdbc-paused-holder-grant-window", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine local = engine()) {
            PausedChild paused = PausedChild.start(run, local, childArgs(lease, TTL, 7), config(lease, TTL, 7));
            StaleWrites.Tally tally = paused.staleWrites(run, 2, "jdbc-paused-holder-grant-window", false);
            HistoryChecker.Verdict verdict = run.finish();
            assertGrantWindowOpen(verdict);
            assertStaleWrites(verdict, tally);
        }
    }

    /**
     * Leadership, as {@code ZooKeeperHolderFaultScenariosTest.pausedLeader}: the leader of an election, in a child JVM, is
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
                pauseUntilTakenOver(run, child, List.of(rival));
            }
            assertStaleWrites(run.finish(), tally);
        }
    }

    /**
     * An instance restarted while it holds the lease: the child JVM is killed (SIGKILL) in its section and started again
     * with the same arguments, and goes for the same name while the old grant may still be live; the restarted life is
     * granted only a higher token ({@link Restarts}). The first round makes the child's frozen write stale after a
     * successor's write, so that the fence mutant shows.
     */
    @Test
    void restartedWhileHolding() throws Exception {
        String lease = "jdbc-restarted";
        Duration ttl = seconds(4);
        try (FaultRun run = new FaultRun("jdbc-restarted-holder", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine local = engine()) {
            PausedChild paused = PausedChild.start(run, local, childArgs(lease, ttl, 10), config(lease, ttl, 10));
            StaleWrites.Tally tally = paused.staleWrites(run, 1, "jdbc-restarted-holder", false);
            JdbcTemplate store = new JdbcTemplate(postgres.dataSource());
            ChildHolder child = paused.child();
            for (int round = 0; round < Soak.rounds(1); round++) {
                child = Restarts.whileHolding(run, child, List.of(paused.rival()), 11 + round, () -> store.queryForObject(
                        "SELECT count(*) FROM lease_lock WHERE name = ? AND owner IS NOT NULL"
                                + " AND expires_at > CURRENT_TIMESTAMP", Integer.class, lease) > 0);
            }
            assertStaleWrites(run.finish(), tally);
        }
    }

    /**
     * Shared tokens ({@code lease.jdbc.token: shared}) with idle rows deleted: every holder's backend deletes rows idle
     * for a millisecond (its own sweeper, once a second), and a cleanup job deletes the lease's row whenever it is free
     * or expired, every few ms; so most grants re-create the row, and a holder paused until its row expired finds it
     * deleted and re-created by its successor. Tokens must still rise in real time across every deletion (the checker's
     * first property: a re-created row counting from the start again would repeat tokens), and the paused holder's
     * stale writes are refused.
     */
    @Test
    void sharedTokensWithIdleRowsDeleted() throws Exception {
        sharedTokensWithIdleRowsDeleted("jdbc-shared-tokens-idle-rows-deleted", "jdbc (PostgreSQL), shared tokens",
                holderDataSource(), postgres.dataSource(), postgres.jdbcUrl(), "CURRENT_TIMESTAMP");
    }

    /**
     * The scenario of {@link #sharedTokensWithIdleRowsDeleted()} on the lease store {@code store} (its JDBC URL
     * {@code storeUrl} for the child), its idle rows deleted through {@code cleanupStore}, where {@code now} is the
     * database's clock as the backend compares {@code expires_at} with it; the ledger is the PostgreSQL of the class.
     */
    static void sharedTokensWithIdleRowsDeleted(String scenario, String backend, DataSource store,
            DataSource cleanupStore, String storeUrl, String now) throws Exception {
        String lease = "jdbc-shared-idle";
        String table = "lease_shared";
        JdbcLeaseBackend shared = new JdbcLeaseBackend(store, table, JdbcLeaseBackend.Tokens.SHARED,
                Duration.ofMillis(1));
        shared.createSchema();
        JdbcTemplate cleanup = new JdbcTemplate(cleanupStore);
        AtomicInteger deletions = new AtomicInteger();
        AtomicBoolean cleaning = new AtomicBoolean(true);
        try (FaultRun run = new FaultRun(scenario, backend, LeaseKind.CORRECTNESS, ledger(lease)); shared;
                LeaseEngine local = ZooKeeperHolder.engine(shared, LeaseKind.CORRECTNESS);
                JdbcLeaseBackend secondShared = new JdbcLeaseBackend(store, table, JdbcLeaseBackend.Tokens.SHARED,
                        Duration.ofMillis(1));
                LeaseEngine second = ZooKeeperHolder.engine(secondShared, LeaseKind.CORRECTNESS)) {
            Thread cleaner = new Thread(() -> {
                while (cleaning.get()) {
                    try {
                        if (cleanup.update("DELETE FROM " + table + " WHERE name = ? AND expires_at <= " + now,
                                lease) > 0) {
                            deletions.incrementAndGet();
                            run.fault("deleted the idle row of " + lease, System.nanoTime());
                        }
                        Thread.sleep(5);
                    }
                    catch (InterruptedException ex) {
                        return;
                    }
                    catch (RuntimeException ex) {
                        run.history.problem("the cleanup job failed: " + ex);
                        return;
                    }
                }
            }, "idle-row-cleanup");
            cleaner.setDaemon(true);
            cleaner.start();
            Map<String, String> args = childArgs(lease, TTL, 11);
            args.put("jdbc-url", storeUrl);
            args.put("jdbc-table", table);
            args.put("jdbc-tokens", "SHARED");
            args.put("jdbc-delete-idle-after-ms", "1");
            PausedChild paused = PausedChild.start(run, local, args, config(lease, TTL, 11));
            StaleWrites.Tally tally = paused.staleWrites(run, Soak.rounds(1), scenario, false);
            // A second instance (a backend of its own, sweeper included) competes from now on: more grants, more
            // rows deleted and re-created between them.
            LeaseWorker third = run.worker(3, second, config(lease, TTL, 12));
            for (int round = 0; round < Soak.rounds(1); round++) {
                pauseUntilTakenOver(run, paused.child(), List.of(paused.rival(), third));
            }
            cleaning.set(false);
            cleaner.join(BOUND.toMillis());
            HistoryChecker.Verdict verdict = run.finish();
            assertStaleWrites(verdict, tally);
            assertThat(deletions.get()).as("deletions of the lease's idle row").isPositive();
        }
        finally {
            cleaning.set(false);
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
}
