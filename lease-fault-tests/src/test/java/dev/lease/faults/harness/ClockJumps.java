package dev.lease.faults.harness;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.lease.faults.workload.LeaseWorker;

/** Moves a faketime child's wall clock five minutes forward and back while it keeps taking the lease. */
public final class ClockJumps {

    private ClockJumps() {
    }

    /**
     * The wall-clock scenario of every backend: first the stale write the fence exists for, from the holder whose
     * clock will jump (its loss comes before the jumps), then {@code rounds} jumps that must not cost that holder
     * another lease; finishes the run.
     */
    public static void afterAStaleWrite(FaultRun run, ChildHolder child, LeaseWorker rival, Path offsetFile, int rounds)
            throws Exception {
        long stale = StaleWrites.pausedAcross(run, child, List.of(rival), "nothing else",
                () -> StaleWrites.Undo.NOTHING);
        jump(run, child, rival, offsetFile, rounds);
        run.finish();
        assertThat(run.history.interruptedSectionsOf(child.worker(), stale)).as("leases the jumping holder lost")
                .isZero();
    }

    /**
     * The rival stands by while the jumping holder waits for its next grant: a worker that releases and at once
     * acquires again can win every race against a holder in another JVM, and the scenario is about the jumps.
     */
    static void jump(FaultRun run, ChildHolder child, LeaseWorker rival, Path offsetFile, int rounds)
            throws Exception {
        for (int round = 0; round < rounds; round++) {
            for (String offset : new String[] { "+5m", "-5m" }) {
                Faketime.set(offsetFile, offset);
                run.fault("wall clock of child " + child.worker() + " jumped to " + offset, System.nanoTime());
                long expected = offset.startsWith("+") ? 300_000 : -300_000;
                // The jump must really be there, or the scenario proves nothing (libfaketime caches the offset ~1 s).
                await().atMost(seconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Math.abs(child.wallClockOffsetMillis() - expected) < 30_000);
                long grants = run.grantsOf(child.worker());
                rival.standBy(true);
                try {
                    await().atMost(seconds(60)).pollInterval(Duration.ofMillis(20))
                            .until(() -> run.grantsOf(child.worker()) > grants);
                }
                finally {
                    rival.standBy(false);
                }
            }
        }
        Faketime.set(offsetFile, "+0");
    }
}
