package dev.lease.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads behind renewal. A timer thread only keeps time (renewal ticks, validity deadlines) and never does
 * I/O, so a backend that hangs cannot delay the deadline that declares its leases lost. Renewal and release
 * requests run on a bounded pool per backend, so a backend that hangs cannot starve another one's renewals.
 */
final class RenewalExecutors implements AutoCloseable {

    private final ScheduledThreadPoolExecutor timer;
    private final Map<String, ThreadPoolExecutor> io = new ConcurrentHashMap<>();
    private final int ioThreads;
    private volatile boolean closed;

    RenewalExecutors(int ioThreads) {
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("lease-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.ioThreads = ioThreads;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    /** The I/O pool of one backend; after {@link #close()} it rejects work. */
    ExecutorService io(String backendId) {
        ThreadPoolExecutor pool = io.computeIfAbsent(backendId, id -> {
            ThreadPoolExecutor p = new ThreadPoolExecutor(ioThreads, ioThreads, 30, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), daemon("lease-" + id));
            p.allowCoreThreadTimeOut(true);
            return p;
        });
        if (closed) {
            pool.shutdownNow();
        }
        return pool;
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        io.values().forEach(ThreadPoolExecutor::shutdownNow);
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
