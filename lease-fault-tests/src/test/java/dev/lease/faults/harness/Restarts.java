package dev.lease.faults.harness;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.LongStream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.faults.checker.History;
import dev.lease.faults.workload.Worker;

/**
 * An application instance restarted while it holds a lease: its JVM is killed ({@code SIGKILL}, so nothing is released
 * and the store keeps its grant until it expires there) and started again at once with the same configuration, and
 * goes for the same name while its old grant may still be live. The new life must wait for the old grant to end and
 * then get a higher token: it must never take the old grant for its own.
 */
public final class Restarts {

    private static final Log log = LogFactory.getLog(Restarts.class);
    private static final Duration BOUND = seconds(30);
    private static final Duration POLL = Duration.ofMillis(5);

    private Restarts() {
    }

    /**
     * Waits until {@code child} holds the lease (again: a grant it did not have yet), with {@code rivals} standing by
     * so that the restarted child alone competes for the name; kills it; restarts it as worker {@code worker}; waits
     * until the new life is granted the lease and checks that its token is above the killed life's.
     *
     * @param oldGrantLive asked once the restarted JVM is ready: whether the store still held the killed life's grant
     *        then (information for the fault's description: a restart is not made to be faster than the ttl)
     * @return the restarted child
     */
    public static ChildHolder whileHolding(FaultRun run, ChildHolder child, List<? extends Worker> rivals, int worker,
            Callable<Boolean> oldGrantLive) throws Exception {
        long grants = run.grantsOf(child.worker());
        rivals.forEach(rival -> rival.standBy(true));
        try {
            await().atMost(BOUND).pollInterval(POLL)
                    .until(() -> run.grantsOf(child.worker()) > grants && child.holding());
            long killedToken = lastGrant(run, child.worker());
            ChildHolder restarted = run.killAndRestart(child, worker);
            boolean live = oldGrantLive.call();
            await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantsOf(worker) > 0);
            long token = firstGrant(run, worker);
            run.fault("restarted worker " + worker + " was granted token " + token + " after the killed life's token "
                    + killedToken + (live ? "; the old grant was still live at the store when the restarted JVM was"
                            + " ready" : "; the old grant had expired by the time the restarted JVM was ready"),
                    System.nanoTime());
            log.info("restart of child holder " + child.worker() + " as " + worker + ": token " + killedToken + " -> "
                    + token + (live ? " (old grant live at restart)" : ""));
            assertThat(token).as("the token of the restarted instance's first grant, after the killed life's")
                    .isGreaterThan(killedToken);
            return restarted;
        }
        finally {
            rivals.forEach(rival -> rival.standBy(false));
        }
    }

    private static long lastGrant(FaultRun run, int worker) {
        return grantsOf(run, worker).reduce((first, second) -> second).orElseThrow();
    }

    private static long firstGrant(FaultRun run, int worker) {
        return grantsOf(run, worker).findFirst().orElseThrow();
    }

    private static LongStream grantsOf(FaultRun run, int worker) {
        return run.history.ops().stream().filter(op -> op.kind == History.Kind.ACQUIRE && op.ok() && op.worker == worker)
                .sorted(Comparator.comparingLong(op -> op.completedAt)).mapToLong(op -> op.token);
    }
}
