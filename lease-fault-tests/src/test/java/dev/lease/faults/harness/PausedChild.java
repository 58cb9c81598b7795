package dev.lease.faults.harness;

import java.util.Map;
import java.util.Random;

import dev.lease.LeaseTemplate;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaseWorker;

/**
 * A child holder (worker 1) whose first write is frozen ({@code pause-before-write}), and an in-process rival
 * (worker 2) whose first write after a grant waits ({@code successor}): what the paused-holder rounds of
 * {@link StaleWrites#pausedWrites} need.
 */
public record PausedChild(ChildHolder child, LeaseWorker rival, HeldAfterGrant successor) {

    /** Starts the child, waits until it stands before its first write, then starts the rival on {@code local}. */
    public static PausedChild start(FaultRun run, LeaseTemplate local, Map<String, String> childArgs,
            LeaseWorker.Config rival) throws Exception {
        childArgs.put("pause-before-write", "true");
        ChildHolder child = run.child(1, childArgs, Map.of());
        // The child first, alone: a worker that releases and takes the lease again at once can starve it.
        child.awaitWriteReady();
        HeldAfterGrant successor = new HeldAfterGrant();
        return new PausedChild(child, run.worker(2, local, rival, successor), successor);
    }

    /** {@link StaleWrites#pausedWrites} of this pair, seeded by {@code seed}'s name. */
    public StaleWrites.Tally staleWrites(FaultRun run, int rounds, String seed, boolean fencedAtGrant) throws Exception {
        return StaleWrites.pausedWrites(run, child, rival, successor, rounds, new Random(Seeds.of(seed)), fencedAtGrant);
    }
}
