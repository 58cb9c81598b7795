package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;

/**
 * The threads the {@code lease} health checks run on, and how long a check is waited for. A health request must not
 * hang with a backend that hangs (a dead connection, a pool with no connection left), so checks run here and the
 * request waits at most {@link #timeout()}. Daemon threads, idle ones ending after a minute: a stuck check must not
 * keep the JVM alive, and between health requests no thread is kept. Closed with the application context.
 */
final class LeaseHealthChecks implements AutoCloseable {

    static final String THREAD_PREFIX = "lease-health-";

    private final Duration timeout;
    private final ExecutorService executor;

    LeaseHealthChecks(@Nullable Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new LeaseConfigurationException("lease.health.timeout is "
                    + (timeout == null ? "empty" : Durations.format(timeout)) + ", so no health check could ever answer.",
                    "set lease.health.timeout to a positive duration such as 2s, or remove it for the default (2s).");
        }
        this.timeout = timeout;
        AtomicInteger threads = new AtomicInteger();
        // Unbounded in principle, bounded in practice: each backend has at most one check running (see
        // BackendHealthIndicator), and an application has one or two backends.
        this.executor = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 1, TimeUnit.MINUTES, new SynchronousQueue<>(),
                task -> {
                    Thread thread = new Thread(task, THREAD_PREFIX + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** How long a health request waits for a backend's check. */
    Duration timeout() {
        return timeout;
    }

    /**
     * Runs {@code check} on a thread of its own.
     *
     * @throws java.util.concurrent.RejectedExecutionException once closed
     */
    void execute(Runnable check) {
        executor.execute(check);
    }

    /** Interrupts the checks still running: the application is going away and nobody waits for their answer. */
    @Override
    public void close() {
        executor.shutdownNow();
    }
}
