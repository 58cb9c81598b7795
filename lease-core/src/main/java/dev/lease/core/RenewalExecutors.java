package dev.lease.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
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

    /**
     * How long closing the engine waits for releases (of the leases it declares lost, and those already queued)
     * before leaving them to the background; their grants then expire at the store on their own.
     */
    static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(5);

    private final ScheduledThreadPoolExecutor timer;
    private final Map<String, ThreadPoolExecutor> io = new ConcurrentHashMap<>();
    private final int ioThreads;
    /** Grant requests and waits the caller stops waiting for at its deadline; unbounded, as each one's caller is. */
    private final ThreadPoolExecutor calls;
    private volatile boolean closed;

    RenewalExecutors(int ioThreads) {
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("lease-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.ioThreads = ioThreads;
        this.calls = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                daemon("lease-call"));
    }

    /**
     * Where the engine runs a backend call that may outlast its caller's wait. Not bounded: every call there has a
     * caller waiting for it (at most one per caller), and a call stuck on a dead connection must not delay another.
     * After {@link #close()} it rejects work.
     */
    Executor calls() {
        return calls;
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
            pool.shutdown();
        }
        return pool;
    }

    /**
     * Runs store I/O that must happen even though its caller cannot wait for it (a release after a loss, the clean-up
     * of a failed grant request) on the backend's pool; once closed, here and now, with the thread's interrupt set
     * aside so that the store client does not abort the call.
     */
    void runInBackground(String backendId, Runnable io) {
        try {
            io(backendId).execute(io);
        }
        catch (RejectedExecutionException closed) {
            withoutInterrupt(io);
        }
    }

    /** Runs {@code task} with the current thread's interrupt cleared, and restores it afterwards. */
    static void withoutInterrupt(Runnable task) {
        boolean interrupted = Thread.interrupted();
        try {
            task.run();
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops the timer at once. The I/O pools finish what is queued, within {@link #SHUTDOWN_GRACE}: by then the
     * engine has cancelled every renewal, so what remains are releases of lost leases, which must not be dropped on
     * shutdown.
     */
    @Override
    public void close() {
        close(System.nanoTime() + SHUTDOWN_GRACE.toNanos());
    }

    /** Like {@link #close()}, waiting for the I/O pools until {@code deadline} (on {@link System#nanoTime()}). */
    void close(long deadline) {
        closed = true;
        timer.shutdownNow();
        calls.shutdown();
        io.values().forEach(ThreadPoolExecutor::shutdown);
        for (ThreadPoolExecutor pool : io.values()) {
            try {
                pool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // Drop what never started, but never interrupt a store call in flight: it may be shared by other leases,
        // and the daemon thread ends with the call.
        io.values().forEach(pool -> pool.getQueue().clear());
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
