package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

import dev.lease.once.JdbcOnceStore;
import dev.lease.spi.Credentials;

/**
 * Deletes {@code @Once} keys older than {@code lease.once.retention} in the background: first a minute after start,
 * then every tenth of the retention (at most hourly). Keys younger than the retention are never deleted, by the
 * database's clock; every instance sweeps, which costs a statement that finds nothing. Without the table (an
 * application with a DataSource and no {@code @Once} method) nothing is swept.
 */
final class OnceSweeper implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(OnceSweeper.class);

    private static final Duration FIRST = Duration.ofMinutes(1);
    private static final Duration LONGEST_INTERVAL = Duration.ofHours(1);

    private final ObjectProvider<JdbcOnceStore> store;
    private final Duration retention;
    private ScheduledExecutorService executor;

    OnceSweeper(ObjectProvider<JdbcOnceStore> store, Duration retention) {
        this.store = store;
        this.retention = retention;
    }

    /** One sweep now, on the caller's thread. */
    int sweep() {
        JdbcOnceStore found = store.getIfAvailable();
        return found == null ? 0 : found.deleteOlderThan(retention);
    }

    /**
     * An application with a DataSource but no {@code @Once} method has no table to sweep, and must not be warned every
     * sweep; one with {@code @Once} methods was refused at startup without it.
     */
    private boolean tableExists() {
        JdbcOnceStore found = store.getIfAvailable();
        try {
            if (found != null) {
                found.verify("The sweep of @Once keys");
                return true;
            }
        }
        catch (RuntimeException ex) {
            log.debug("No @Once keys to sweep: " + Credentials.redact(ex.getMessage()));
        }
        return false;
    }

    private void sweepQuietly() {
        try {
            int deleted = sweep();
            if (deleted > 0 && log.isDebugEnabled()) {
                log.debug("Deleted " + deleted + " @Once key(s) older than " + retention);
            }
        }
        catch (RuntimeException ex) {
            log.warn("Deleting @Once keys older than " + retention + " failed; trying again later: "
                    + Credentials.redact(ex.getMessage()));
        }
    }

    @Override
    public synchronized void start() {
        if (executor != null || !tableExists()) {
            return;
        }
        executor = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "lease-once-sweep");
            thread.setDaemon(true);
            return thread;
        });
        Duration interval = retention.dividedBy(10);
        long every = Math.max(1, Math.min(interval.toMillis(), LONGEST_INTERVAL.toMillis()));
        executor.scheduleWithFixedDelay(this::sweepQuietly, FIRST.toMillis(), every, TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (executor != null) {
            executor.shutdownNow();
            executor = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return executor != null;
    }
}
