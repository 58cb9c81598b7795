package dev.lease.faults.workload;

/**
 * A worker of a fault scenario that a harness can hold back and stop: a {@link LeaseWorker} looping over leased
 * sections, or a {@link LeaderWorker} campaigning for an election. Runs in a thread of its own ({@link #run()}).
 */
public interface Worker extends Runnable {

    /** Ends the loop: {@link #run()} returns once the worker's current section or term is over. */
    void stop();

    /**
     * While on, the worker takes no new lease or term, so that another holder (a child JVM that only polls, or that
     * must win a race against a worker that re-acquires at once) gets it: a {@link LeaseWorker} acquires nothing more
     * once its current cycle ends; a {@link LeaderWorker} gives up its term at once and stops campaigning.
     */
    void standBy(boolean on);

    /** Whether the worker is between a grant and the end of its work, as far as it knows. */
    boolean holding();
}
