package dev.lease.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Wakes the waiters of one lease table on PostgreSQL when another instance releases a name: releases
 * {@code NOTIFY} the table's channel with the name as payload, and one daemon thread per backend {@code LISTEN}s on
 * one connection of its own. Only a shortcut: while the connection is being opened, after it failed, and for a
 * release whose notification came before the waiter registered, waiters keep polling as on every other database.
 * The only class that touches the PostgreSQL driver, so that the backend loads without it.
 */
final class PgReleaseListener implements AutoCloseable {

    private static final Log log = LogFactory.getLog(PgReleaseListener.class);

    /** PostgreSQL's longest identifier; {@code pg_notify} refuses longer channel names. */
    private static final int MAX_CHANNEL = 63;

    /** How long one read of notifications blocks, which bounds how late the thread notices {@link #close}. */
    private static final int READ_MILLIS = 500;

    /** How long the thread waits before opening a new connection after one failed. */
    private static final long RETRY_MILLIS = 1000;

    private final DataSource dataSource;
    private final String channel;
    private final Map<String, Signal> waiting = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean listening;
    private volatile boolean closed;

    PgReleaseListener(DataSource dataSource, String table) {
        this.dataSource = dataSource;
        this.channel = channel(table);
        this.thread = new Thread(this::run, "lease-jdbc-listen-" + table);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * The channel of a table: its validated name, lowercase (as an unquoted {@code LISTEN} folds it, while
     * {@code pg_notify} takes it verbatim), at most 63 characters.
     */
    static String channel(String table) {
        String name = (table.replace('.', '_') + "_released").toLowerCase(Locale.ROOT);
        return name.length() > MAX_CHANNEL ? name.substring(0, MAX_CHANNEL) : name;
    }

    String channel() {
        return channel;
    }

    /** Whether notifications arrive now; a waiter that registers while they do not falls back to its poll. */
    boolean listening() {
        return listening;
    }

    /**
     * Blocks until a release of {@code name} is notified, or {@code millis} passed.
     *
     * @throws InterruptedException when the waiting thread is interrupted
     */
    void await(String name, long millis) throws InterruptedException {
        Signal signal = waiting.compute(name, (n, s) -> (s == null ? new Signal() : s).join());
        try {
            signal.await(millis);
        }
        finally {
            waiting.computeIfPresent(name, (n, s) -> s.leave() ? null : s);
        }
    }

    private void run() {
        while (!closed) {
            listenUntilClosedOrFailed();
            if (!closed) {
                // Whatever was released meanwhile was missed: every waiter looks again.
                waiting.values().forEach(Signal::wake);
                pause();
            }
        }
    }

    private void listenUntilClosedOrFailed() {
        Connection c;
        try {
            c = dataSource.getConnection();
        }
        catch (SQLException | RuntimeException ex) {
            if (!closed) {
                log.debug("Not listening for releases on " + channel + ", waiters poll: " + ex);
            }
            return;
        }
        Boolean autoCommit = null;
        try {
            autoCommit = c.getAutoCommit();
            c.setAutoCommit(true);
            try (Statement listen = c.createStatement()) {
                // A validated identifier, not a value: LISTEN takes no bind parameter.
                listen.execute("LISTEN " + channel);
            }
            PGConnection pg = c.unwrap(PGConnection.class);
            listening = true;
            while (!closed) {
                PGNotification[] notifications = pg.getNotifications(READ_MILLIS);
                if (notifications != null) {
                    for (PGNotification n : notifications) {
                        wake(n.getParameter());
                    }
                }
            }
        }
        catch (SQLException | RuntimeException ex) {
            if (!closed) {
                log.debug("Not listening for releases on " + channel + ", waiters poll: " + ex);
            }
        }
        finally {
            listening = false;
            giveBack(c, autoCommit);
        }
    }

    /**
     * Hands the connection back to its pool as it was taken: a pooled connection still listening would have the
     * driver buffer every release of the table for whoever uses it next, forever, and one left in autocommit would
     * commit statements its next user means to run in a transaction. A connection that cannot be reset is aborted,
     * so that no pool hands it out again.
     */
    private void giveBack(Connection c, Boolean autoCommit) {
        try {
            try (Statement unlisten = c.createStatement()) {
                unlisten.execute("UNLISTEN *");
            }
            // Drops what arrived before the UNLISTEN, which nobody would ever read.
            c.unwrap(PGConnection.class).getNotifications();
            if (autoCommit != null && c.getAutoCommit() != autoCommit) {
                c.setAutoCommit(autoCommit);
            }
        }
        catch (SQLException | RuntimeException ex) {
            log.debug("Could not reset the listening connection of " + channel + ", aborting it: " + ex);
            try {
                c.abort(Runnable::run);
            }
            catch (SQLException | RuntimeException abortFailed) {
                log.debug("Could not abort the listening connection of " + channel + ": " + abortFailed);
            }
        }
        try {
            c.close();
        }
        catch (SQLException ex) {
            log.debug("Could not close the listening connection of " + channel + ": " + ex);
        }
    }

    private void wake(String name) {
        Signal signal = waiting.get(name);
        if (signal != null) {
            signal.wake();
        }
    }

    private void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(RETRY_MILLIS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    /**
     * Stops the thread, which closes its connection once the read in progress ends (within half a second); the
     * connection is never closed under a read on another thread.
     */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The waiters of one name: a release wakes them all. */
    private static final class Signal {

        private int waiters;
        private long releases;

        synchronized Signal join() {
            waiters++;
            return this;
        }

        /** True when the last waiter left. */
        synchronized boolean leave() {
            return --waiters == 0;
        }

        synchronized void wake() {
            releases++;
            notifyAll();
        }

        synchronized void await(long millis) throws InterruptedException {
            long seen = releases;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (releases == seen) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return;
                }
                wait(left);
            }
        }
    }
}
