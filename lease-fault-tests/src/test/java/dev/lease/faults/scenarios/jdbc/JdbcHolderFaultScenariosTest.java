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

import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.ClockJumps;
import dev.lease.faults.harness.Faketime;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;

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
                pauseUntilTakenOver(run, child, List.of(rival));
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
            args.put("pause-before-write", "true");
            args.put("fence-at-grant", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 6).fencedAtGrant(lease), successor);
            StaleWrites.pausedWrites(run, child, rival, successor, Soak.rounds(2),
                    new Random(Seeds.of("jdbc-paused-holder-fenced-at-grant")), true);
            for (int round = 0; round < Soak.rounds(2); round++) {
                pauseUntilTakenOver(run, child, List.of(rival));
            }
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
            Map<String, String> args = childArgs(lease, TTL, 7);
            args.put("pause-before-write", "true");
            ChildHolder child = run.child(1, args, Map.of());
            child.awaitWriteReady();
            HeldAfterGrant successor = new HeldAfterGrant();
            LeaseWorker rival = run.worker(2, local, config(lease, TTL, 7), successor);
            StaleWrites.Tally tally = StaleWrites.pausedWrites(run, child, rival, successor, 2,
                    new Random(Seeds.of("jdbc-paused-holder-grant-window")), false);
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
