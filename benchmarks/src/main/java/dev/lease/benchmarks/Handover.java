package dev.lease.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The handover rows: how long a lock takes to reach the next of several waiters once its holder releases it, for the
 * contenders that can wait.
 */
final class Handover {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    Handover(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    void run(String section, List<Contender> all, int waiters, java.util.function.LongSupplier trips)
            throws Exception {
        run(section, all, waiters, trips, "database round trips per handover (all threads)");
    }

    void run(String section, List<Contender> all, int waiters, java.util.function.LongSupplier trips,
            String tripsMetric) throws Exception {
        List<Contender> contenders = all.stream().filter(c -> c.first() != null && c.first().canWait()).toList();
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        Map<Contender, String> failures = new LinkedHashMap<>();
        Map<Contender, long[]> statements = new LinkedHashMap<>();
        contenders.forEach(c -> stats.put(c, new Stats()));
        contenders.forEach(c -> statements.put(c, new long[1]));
        for (int round = 0; round < settings.handoverRounds(); round++) {
            for (int k = 0; k < contenders.size(); k++) {
                Contender c = contenders.get((k + round) % contenders.size());
                if (!failures.containsKey(c)) {
                    long before = trips == null ? 0 : trips.getAsLong();
                    String failure = handoverSlice(c, waiters, "h" + waiters + "-r" + round, stats.get(c));
                    statements.get(c)[0] += trips == null ? 0 : trips.getAsLong() - before;
                    if (failure != null) {
                        failures.put(c, failure);
                    }
                }
            }
        }
        harness.addRows(section, "µs from release to the next waiter holding it", contenders, stats, failures);
        if (trips != null) {
            for (Contender c : contenders) {
                harness.addRow(new Row(section, c.name(), tripsMetric,
                        statements.get(c)[0] / (double) Math.max(1, stats.get(c).count()), Double.NaN,
                        stats.get(c).count(), Double.NaN, null));
            }
        }
    }

    /** How long each holder keeps the lock in the handover measurement. */
    static final long HANDOVER_HOLD_MILLIS = 5;

    /** Volatile state shared by the threads of one handover slice. */
    private static final class Baton {
        volatile long releasedAt;
        volatile long releasedBy = -1;
        volatile long generation;
        volatile boolean stop;
        final java.util.concurrent.atomic.AtomicInteger holders = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
    }

    /**
     * {@code waiters + 1} threads, split over the two instances, take turns: each acquires, notes how long it took
     * since the previous holder (another thread) released, holds for {@value #HANDOVER_HOLD_MILLIS} ms, releases, and rejoins the queue only after someone else
     * got the lock, so every sample is a real handover to a waiter.
     */
    private String handoverSlice(Contender c, int waiters, String key, Stats stats) throws InterruptedException {
        Baton baton = new Baton();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t <= waiters; t++) {
            Locker locker = t % 2 == 0 ? c.first() : c.second();
            Thread thread = new Thread(() -> {
                long self = Thread.currentThread().getId();
                try {
                    while (!baton.stop) {
                        Locker.Held held = locker.acquire(key);
                        long now = System.nanoTime();
                        if (baton.holders.incrementAndGet() != 1) {
                            baton.overlaps.incrementAndGet();
                        }
                        if (baton.releasedBy != -1 && baton.releasedBy != self && !baton.stop) {
                            stats.add((now - baton.releasedAt) / 1000.0);
                        }
                        long generation = ++baton.generation;
                        // Hold a little, so that the waiters are really waiting (parked on a watch, a subscription or
                        // a poll) when the release comes, rather than racing the release with a fresh attempt.
                        Thread.sleep(HANDOVER_HOLD_MILLIS);
                        baton.releasedBy = self;
                        baton.holders.decrementAndGet();
                        baton.releasedAt = System.nanoTime();
                        held.close();
                        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                        while (baton.generation == generation && !baton.stop && System.nanoTime() < waitUntil) {
                            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                        }
                    }
                }
                catch (Throwable ex) {
                    error.compareAndSet(null, ex);
                    baton.stop = true;
                }
            }, "handover-" + t);
            thread.setDaemon(true);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        Thread.sleep(settings.handoverSlice().toMillis());
        baton.stop = true;
        for (Thread thread : threads) {
            thread.join(60_000);
            if (thread.isAlive()) {
                return "a waiter did not finish within 60 s";
            }
        }
        if (baton.overlaps.get() > 0) {
            return "mutual exclusion broken: " + baton.overlaps.get() + " times a thread acquired while another held";
        }
        return error.get() == null ? null : Benchmarks.describe(error.get());
    }
}
