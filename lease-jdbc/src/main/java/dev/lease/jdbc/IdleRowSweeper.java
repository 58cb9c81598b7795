package dev.lease.jdbc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Deletes the rows of the lease table free (released or expired) for at least {@code lease.jdbc.delete-idle-after},
 * on a daemon thread of the backend started by its first grant and ended by its close. Only with shared tokens
 * ({@link TokenCounter}), which keep a re-created row's tokens above the deleted row's.
 */
final class IdleRowSweeper {

    /** Most idle rows one deleting statement takes, so that it holds few row locks for a short time. */
    static final int BATCH = 100;

    // The backend's own category, as before the backend was split: logging configurations name it.
    private static final Log log = LogFactory.getLog(JdbcLeaseBackend.class);

    private final Autocommit calls;
    private final Supplier<LeaseStatements> statements;
    private final String table;
    private final Duration deleteIdleAfter;
    private volatile long sweepEveryMillis;
    private volatile boolean warnedMissingPrivilege;
    private Thread sweeper;
    private boolean closed;

    /**
     * @param deleteIdleAfter how long a row must have been free before it is deleted; null deletes nothing
     */
    IdleRowSweeper(Autocommit calls, Supplier<LeaseStatements> statements, String table, Duration deleteIdleAfter) {
        this.calls = calls;
        this.statements = statements;
        this.table = table;
        this.deleteIdleAfter = deleteIdleAfter;
        this.sweepEveryMillis = deleteIdleAfter == null ? 0 : Math.max(1000, Math.min(60_000,
                deleteIdleAfter.toMillis() / 2));
    }

    /** Whether idle rows are deleted at all, and so need an index on {@code expires_at}. */
    boolean deletes() {
        return deleteIdleAfter != null;
    }

    /**
     * Deletes the rows free (released or expired) for at least {@code delete-idle-after}, except the counter row: a
     * grant sets {@code expires_at} a ttl ahead, so a held or just granted row never matches, and a grant racing the
     * deletion either updates the row first (which then no longer matches) or finds no row and inserts a new one,
     * whose token the shared counter still draws above every earlier one. Does nothing without
     * {@code delete-idle-after}.
     *
     * <p>At most {@value #BATCH} rows per statement, each committed on its own, until a statement finds fewer:
     * one statement over every idle row would hold its row locks (on MySQL and MariaDB also on every row it scanned)
     * until it ends, and renewals and grants of the names it touches would wait for it and could lose their leases.
     * The sweeper's thread calls it; tests call it directly.
     *
     * @return how many rows were deleted
     */
    int deleteIdleRows() {
        if (deleteIdleAfter == null) {
            return 0;
        }
        LeaseStatements sql = statements.get();
        int deleted = 0;
        int batch;
        do {
            batch = calls.run("deletion of idle rows", Autocommit.MAX_STATEMENT_SECONDS * 1000L,
                    call -> call.update(sql.deleteIdle, TokenCounter.ROW, -deleteIdleAfter.toMillis(), BATCH));
            deleted += batch;
        }
        while (batch >= BATCH && !isClosed());
        return deleted;
    }

    /** How often the thread deletes idle rows, instead of every half delete-idle-after; tests only. */
    void sweepEvery(Duration every) {
        this.sweepEveryMillis = Math.max(1, every.toMillis());
    }

    /**
     * Starts the thread that deletes idle rows, once; the backend calls it on its first grant, so that a backend that
     * never grants (a health check only, a test) deletes nothing and starts nothing.
     */
    synchronized void start() {
        if (deleteIdleAfter == null || sweeper != null || closed) {
            return;
        }
        sweeper = new Thread(this::sweepIdleRows, "lease-jdbc-idle-rows-" + table);
        sweeper.setDaemon(true);
        sweeper.start();
    }

    /** At most once per half {@code delete-idle-after}, once a second at most and once a minute at least. */
    private void sweepIdleRows() {
        while (!isClosed()) {
            try {
                synchronized (this) {
                    // stop() notifies, so that the thread ends at once.
                    long deadline = System.nanoTime() + sweepEveryMillis * 1_000_000L;
                    long left;
                    while (!closed && (left = deadline - System.nanoTime()) > 0) {
                        wait(Math.max(1, left / 1_000_000L));
                    }
                    if (closed) {
                        return;
                    }
                }
            }
            catch (InterruptedException ex) {
                return;
            }
            sweepOnce();
        }
    }

    /** One deletion of idle rows, as the thread makes it; never throws. */
    void sweepOnce() {
        try {
            int deleted = deleteIdleRows();
            if (deleted > 0) {
                log.debug("Deleted " + deleted + " idle lease rows of " + table);
            }
        }
        catch (RuntimeException ex) {
            // Leases are unaffected; the next sweep tries again (the thread must outlive any one failure).
            if (MissingPrivilege.isCause(ex) && !warnedMissingPrivilege) {
                warnedMissingPrivilege = true;
                log.warn("Idle lease rows of " + table + " cannot be deleted: the database user lacks the DELETE "
                        + "privilege on it (" + ex.getMessage() + "). Leases still work, but the rows of names no "
                        + "longer used stay. GRANT DELETE ON " + table + " to the lease user, or remove "
                        + "lease.jdbc.delete-idle-after. Said once; later attempts log at DEBUG.");
            }
            else {
                log.debug("Could not delete idle lease rows of " + table + ": " + ex);
            }
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /** Starts no more deletions and wakes the thread, which ends; {@link #awaitStopped} waits for it. */
    synchronized void stop() {
        closed = true;
        notifyAll();
    }

    /** Waits for the thread to end after {@link #stop}: a deletion in progress ends within its statement timeout. */
    void awaitStopped() {
        Thread sweeping;
        synchronized (this) {
            sweeping = sweeper;
        }
        if (sweeping == null) {
            return;
        }
        try {
            sweeping.join(TimeUnit.SECONDS.toMillis(Autocommit.MAX_STATEMENT_SECONDS + 1));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the thread runs; tests only. */
    boolean running() {
        Thread sweeping;
        synchronized (this) {
            sweeping = sweeper;
        }
        return sweeping != null && sweeping.isAlive();
    }
}
