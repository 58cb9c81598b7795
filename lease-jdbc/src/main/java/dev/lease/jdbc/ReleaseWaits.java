package dev.lease.jdbc;

import java.time.Duration;
import java.util.function.Supplier;

import javax.sql.DataSource;

/**
 * How a waiter waits for a busy lease to be released. It polls, as no notification exists in plain SQL: at most every
 * 100 ms, bounded by the engine's backoff. On PostgreSQL a release by any instance also wakes the waiter at once: one
 * thread per backend listens for releases ({@link PgReleaseListener}) on a connection of its own, opened on the first
 * wait and closed with the backend. The poll stays, for expiries (which nobody notifies) and for whenever that
 * connection is down.
 */
final class ReleaseWaits {

    /** How often a waiter looks at a busy row; the engine's backoff bounds it from above. */
    private static final long POLL_MILLIS = 100;

    private final DataSource dataSource;
    private final Supplier<LeaseStatements> statements;
    private volatile long pollMillis = POLL_MILLIS;
    private PgReleaseListener listener;
    private boolean closed;

    ReleaseWaits(DataSource dataSource, Supplier<LeaseStatements> statements) {
        this.dataSource = dataSource;
        this.statements = statements;
    }

    /** Returns when {@code name} may have been released, or after the poll interval, or after {@code maxWait}. */
    void await(String name, Duration maxWait) throws InterruptedException {
        long millis = Math.max(1, Math.min(pollMillis, maxWait.toMillis()));
        PgReleaseListener releases = listener();
        if (releases != null && releases.listening()) {
            releases.await(name, millis);
        }
        else {
            Thread.sleep(millis);
        }
    }

    /** The longest a waiter waits before it looks at the row again, notified or not; 100 ms unless a test says so. */
    void pollInterval(Duration interval) {
        this.pollMillis = Math.max(1, interval.toMillis());
    }

    /** Whether releases are listened for now (PostgreSQL only, once someone waited). */
    boolean listening() {
        PgReleaseListener releases;
        synchronized (this) {
            releases = listener;
        }
        return releases != null && releases.listening();
    }

    private synchronized PgReleaseListener listener() {
        if (listener == null && !closed) {
            LeaseStatements sql = statements.get();
            if (sql.channel != null) {
                listener = new PgReleaseListener(dataSource, sql.table);
            }
        }
        return listener;
    }

    /** Stops listening, if it did; later waits poll. */
    void close() {
        PgReleaseListener releases;
        synchronized (this) {
            closed = true;
            releases = listener;
            listener = null;
        }
        if (releases != null) {
            releases.close();
        }
    }
}
