package dev.lease.faults;

import dev.lease.faults.History.Kind;
import dev.lease.faults.History.Outcome;

/** Where a {@link LeaseWorker} reports what it does: straight into a {@link History}, or as lines to a parent JVM. */
interface EventSink {

    void invoke(long id, Kind kind, long at);

    void complete(long id, Kind kind, Outcome outcome, long token, long at, String detail);

    /** The worker's leased work was interrupted: the engine declared its lease lost. */
    void interrupted(long at);

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
        };
    }
}
