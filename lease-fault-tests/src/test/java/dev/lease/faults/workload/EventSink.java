package dev.lease.faults.workload;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;

import dev.lease.faults.checker.History;

/** Where a {@link LeaseWorker} reports what it does: straight into a {@link History}, or as lines to a parent JVM. */
public interface EventSink {

    void invoke(long id, Kind kind, long at);

    void complete(long id, Kind kind, Outcome outcome, long token, long at, String detail);

    /**
     * The worker's leased work was interrupted (the engine declared its lease lost), the section not said: the history
     * takes the worker's section open at {@code at}. Prefer {@link #interrupted(long, long)}.
     */
    void interrupted(long at);

    /** The worker's section holding {@code token} saw its interrupt at {@code at}; see {@link History.Interrupt}. */
    default void interrupted(long token, long at) {
        interrupted(at);
    }

    /** The WRITE {@code id}, just invoked, is made on purpose whatever the section's interrupts say. */
    default void forced(long id) {
    }

    /**
     * Something the worker saw that makes the history untrustworthy or shows a bug it cannot record as an op (an
     * election event out of order, leader work with a token no grant announced): fails the check, see
     * {@link History#problem}.
     */
    void problem(String what);

    /** Records into {@code history} as worker {@code worker}. */
    static EventSink of(History history, int worker) {
        return new EventSink() {
            @Override
            public void invoke(long id, Kind kind, long at) {
                history.invoke(id, worker, kind, at);
            }

            @Override
            public void complete(long id, Kind kind, Outcome outcome, long token, long at, String detail) {
                history.complete(id, outcome, token, at, detail);
            }

            @Override
            public void interrupted(long at) {
                history.interrupted(worker, at);
            }

            @Override
            public void interrupted(long token, long at) {
                history.interrupted(worker, token, at);
            }

            @Override
            public void forced(long id) {
                history.forced(id);
            }

            @Override
            public void problem(String what) {
                history.problem("worker " + worker + ": " + what);
            }
        };
    }
}
