package dev.lease.core;

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
 * I/O, so a backend that hangs cannot delay the deadline that declares its leases lost; renewal requests run on
 * a separate bounded pool.
 */
final class RenewalExecutors implements AutoCloseable {

    private final ScheduledThreadPoolExecutor timer;
    private final ThreadPoolExecutor io;

    RenewalExecutors(int ioThreads) {
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("lease-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.io = new ThreadPoolExecutor(ioThreads, ioThreads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemon("lease-renewal"));
        this.io.allowCoreThreadTimeOut(true);
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    ExecutorService io() {
        return io;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        io.shutdownNow();
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
