package dev.lease.faults.scenarios.zookeeper;

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

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.ClockJumps;
import dev.lease.faults.harness.Faketime;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.PausedChild;
import dev.lease.faults.harness.Restarts;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;

/**
 * Fault scenarios on ZooKeeper that strike the holder: paused holders and leaders (SIGSTOP of a child JVM), their
 * stale writes before and after a successor's grant, and wall-clock jumps.
 */
class ZooKeeperHolderFaultScenariosTest extends ZooKeeperScenarios {

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

    /**
     * An instance restarted while it holds the lease, as {@code JdbcHolderFaultScenariosTest.restartedWhileHolding}:
     * after the SIGKILL the old session, and with it the holder znode, lives on until ZooKeeper expires it, and the
     * restarted JVM (same arguments, a new session) goes for the name meanwhile. Soak only: the JDBC one covers the
     * restart in {@code ./mvnw verify}'s time.
     */
    @Test
    void restartedWhileHolding() throws Exception {
        Assumptions.assumeTrue(Soak.ON, "a soak scenario (-Psoak): jdbc-restarted-holder runs in ./mvnw verify");
        String lease = "zk-restarted";
        try (FaultRun run = new FaultRun("zookeeper-restarted-holder", "zookeeper", LeaseKind.CORRECTNESS,
                ledger(lease)); ZooKeeperHolder local = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION)) {
            PausedChild paused = PausedChild.start(run, local.engine(),
                    childArgs(lease, zookeeper.getConnectString(), SESSION, 11), config(lease, SESSION, 11));
            StaleWrites.Tally tally = paused.staleWrites(run, 1, "zookeeper-restarted-holder", false);
            String holder = ZooKeeperHolder.ROOT + "/" + lease + "/holder";
            ChildHolder child = paused.child();
            for (int round = 0; round < Soak.rounds(1); round++) {
                child = Restarts.whileHolding(run, child, List.of(paused.rival()), 11 + round,
                        () -> local.client().checkExists().forPath(holder) != null);
            }
            assertStaleWrites(run.finish(), tally);
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
}
