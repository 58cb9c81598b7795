package dev.lease.faults.scenarios.spring;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.faults.checker.History.Op;
import dev.lease.LeaseUnavailableException;
import dev.lease.faults.checker.History;
import dev.lease.testing.TcpProxy;

/**
 * One application instance of a Spring workload scenario: its own context of {@link WorkloadApp} (the library's
 * auto-configuration, properties set in code), its own link to ZooKeeper through a {@link TcpProxy} so that a fault
 * can cut it off alone, and a thread group that holds every thread it starts (its drivers, and through them the
 * lease engine's, Curator's and the executors' threads), so that after {@link #close()} none may be left.
 */
final class SpringInstance implements AutoCloseable {

    /** Calls a leased method through its proxy, for worker {@code worker}, with the ACQUIRE its caller invoked. */
    @FunctionalInterface
    interface Call {
        void call(int worker, Op acquire, Random random) throws Exception;
    }

    /** Where the instance's leases live: {@code lease.backend} and the port its proxy forwards to. */
    record Store(String backend, int port) {
    }

    /**
     * Threads that the JVM or a driver library shares across everything, started lazily by whoever came first. Not
     * Curator's callback thread: the auto-configuration hands Curator one it owns and stops it with the context.
     */
    private static final List<String> SHARED_THREADS = List.of("PostgreSQL-JDBC-Cleaner", "process reaper",
            "Common-Cleaner", "ForkJoinPool", "Attach Listener");

    private static final Duration BACKOFF = Duration.ofMillis(100);

    private static final Duration POLL = Duration.ofMillis(50);

    /** How long after its context's close an {@code @Async} call still waited for is taken as dropped. */
    private static final Duration DROPPED_AT_SHUTDOWN = seconds(5);

    final int id;
    final TcpProxy proxy;
    final ThreadGroup group;
    final ConfigurableApplicationContext context;
    private final WorkloadRecorder recorder;
    private final long seed;
    private final List<Thread> drivers = new ArrayList<>();
    private volatile boolean stopped;
    private volatile int strayInterrupts;

    private SpringInstance(int id, TcpProxy proxy, ThreadGroup group, ConfigurableApplicationContext context,
            WorkloadRecorder recorder, long seed) {
        this.id = id;
        this.proxy = proxy;
        this.group = group;
        this.context = context;
        this.recorder = recorder;
        this.seed = seed;
    }

    /**
     * Starts instance {@code id} on ZooKeeper at {@code zooKeeperPort}, through a proxy of its own.
     *
     * @param properties more properties (e.g. {@code workload.*}); the {@code lease.*} ones are set here
     */
    static SpringInstance start(int id, Store store, Duration ttl, WorkloadRecorder recorder,
            DataSource ledger, long seed, Map<String, Object> properties, Class<?>... configurations)
            throws Exception {
        TcpProxy proxy = new TcpProxy(store.port());
        Map<String, Object> props = new HashMap<>();
        props.put("lease.backend", store.backend());
        props.put("lease.default-ttl", ttl.toMillis() + "ms");
        if (store.backend().equals("zookeeper")) {
            props.put("lease.zookeeper.connect-string", proxy.address());
            props.put("lease.zookeeper.session-timeout", ttl.toMillis() + "ms");
            props.put("lease.zookeeper.root", "/spring-workloads");
        }
        else {
            props.put("lease.jdbc.initialize-schema", "always");
            // Timeouts as a production pool would set them: a cut-off instance's calls fail instead of hanging.
            props.put("workload.store-url", "jdbc:postgresql://127.0.0.1:" + proxy.port()
                    + "/postgres?user=postgres&connectTimeout=2&socketTimeout=5");
            configurations = java.util.stream.Stream.concat(Arrays.stream(configurations),
                    java.util.stream.Stream.of(WorkloadOptions.JdbcStore.class)).toArray(Class<?>[]::new);
        }
        props.put("spring.main.register-shutdown-hook", "false");
        props.putAll(properties);
        Class<?>[] sources = new Class<?>[configurations.length + 1];
        sources[0] = WorkloadApp.class;
        System.arraycopy(configurations, 0, sources, 1, configurations.length);
        Class<?>[] configured = sources;
        ThreadGroup group = new ThreadGroup("wl-i" + id);
        FutureTask<ConfigurableApplicationContext> starting = new FutureTask<>(() -> new SpringApplicationBuilder(
                configured).web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .properties(props)
                .initializers(context -> context.getBeanFactory().registerSingleton("workload",
                        new WorkloadApp.Workload(id, recorder, ledger)))
                .run());
        Thread starter = new Thread(group, starting, "wl-i" + id + "-start");
        starter.start();
        try {
            return new SpringInstance(id, proxy, group, starting.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS),
                    recorder, seed);
        }
        catch (Exception ex) {
            proxy.close();
            throw ex;
        }
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    /**
     * Starts a thread of this instance (worker {@code id * 100 + slot}) that calls {@code call} in a loop, recording
     * each call's ACQUIRE before it and its end after it, until {@link #stopDrivers()} or the context closes.
     */
    void drive(int slot, String lease, Call call) {
        int worker = id * 100 + slot;
        Random random = new Random(seed * 1_000_003 + worker);
        Thread driver = new Thread(group, () -> {
            while (!stopped && context.isActive()) {
                Op acquire = recorder.invoke(lease, worker);
                Throwable failure = null;
                try {
                    call.call(worker, acquire, random);
                }
                catch (Throwable ex) {
                    failure = ex;
                }
                recorder.finish(lease, worker, acquire, failure);
                if (Thread.interrupted()) {
                    // The library withdraws its interrupts as the last lost section ends: one left here leaked.
                    strayInterrupts++;
                    recorder.history(lease).problem("worker " + worker + " still carried an interrupt after its call"
                            + " ended (" + (failure == null ? "returned" : failure) + ")");
                }
                Throwable cause = WorkloadRecorder.unwrap(failure);
                if (cause != null && !(cause instanceof dev.lease.LeaseLostException)) {
                    if (cause instanceof LeaseUnavailableException && !context.isActive()) {
                        return;
                    }
                    backoff();
                }
            }
        }, "wl-i" + id + "-driver-" + slot);
        driver.setDaemon(true);
        drivers.add(driver);
        driver.start();
    }

    /**
     * Waits up to {@code bound} for an {@code @Async} call's future; a call that never ends is a failure. Once the
     * context is closed, a call still queued in its executor never runs and its future never completes (the executor's
     * shutdown cancels the queued task, not the {@code CompletableFuture} the caller holds), so the wait ends
     * {@link #DROPPED_AT_SHUTDOWN} after the close with the future cancelled. A call that did run still shows: its
     * section is in the history, and a thread of it still alive fails the scenario's check that the instance is gone.
     */
    void awaitAsync(Future<?> future, Duration bound) throws Exception {
        long start = System.nanoTime();
        long closedAt = 0;
        boolean closed = false;
        while (true) {
            try {
                future.get(POLL.toMillis(), TimeUnit.MILLISECONDS);
                return;
            }
            catch (TimeoutException ex) {
                long now = System.nanoTime();
                if (!closed && !context.isActive()) {
                    closed = true;
                    closedAt = now;
                }
                if (closed && now - closedAt > DROPPED_AT_SHUTDOWN.toNanos()) {
                    future.cancel(true);
                    throw new java.util.concurrent.CancellationException("the @Async leased call did not end within "
                            + DROPPED_AT_SHUTDOWN + " of its context's close: dropped by the executor's shutdown");
                }
                if (now - start > bound.toNanos()) {
                    throw new IllegalStateException("an @Async leased call did not end within " + bound, ex);
                }
            }
        }
    }

    /** Stops the drivers and waits for them; a driver that does not end is a problem of {@code history}. */
    void stopDrivers(History history) throws InterruptedException {
        stopped = true;
        for (Thread driver : drivers) {
            driver.join(seconds(30).toMillis());
            if (driver.isAlive()) {
                history.problem("driver " + driver.getName() + " still alive 30 s after it was told to stop");
            }
        }
    }

    boolean driversAlive() {
        return drivers.stream().anyMatch(Thread::isAlive);
    }

    /** Threads of this instance still alive, apart from those the JVM shares. */
    List<String> liveThreads() {
        Thread[] threads = new Thread[group.activeCount() + 16];
        int n = group.enumerate(threads, true);
        return Arrays.stream(threads, 0, n).filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> SHARED_THREADS.stream().noneMatch(name::startsWith)).toList();
    }

    private static void backoff() {
        try {
            Thread.sleep(BACKOFF.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    int strayInterrupts() {
        return strayInterrupts;
    }

    /**
     * Closes the context (the application shutting down) and then the proxy. Drivers still running go on calling
     * while it closes, as an application's threads would, and end once it is closed.
     */
    @Override
    public void close() {
        try {
            context.close();
        }
        finally {
            proxy.close();
        }
    }
}
