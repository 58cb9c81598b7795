package dev.lease.faults.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.testing.TestTiming;

/**
 * A fault injector that knows nothing of the workload: a background thread that, on seeded random timers, switches
 * on a fault drawn at random from those registered, and schedules it to switch itself off after a random time. It
 * never looks at who holds a lease, so faults strike holders and waiters alike, in the middle of a grant, a write or
 * a release, and several faults overlap (each registered fault at most once at a time: a link is frozen or not).
 *
 * <p>The seed fixes the schedule (which fault, after which gap, for how long); the interleaving with the workers is
 * up to the machine, so a replay from the seed replays the nemesis, not the threads.
 */
public final class Nemesis implements AutoCloseable {

    private static final Log log = LogFactory.getLog(Nemesis.class);

    /** Switches a fault on; the returned {@link Off} switches it off again. */
    @FunctionalInterface
    public interface Switch {
        Off on(Random random) throws Exception;
    }

    /** Switches a fault off; called exactly once. */
    @FunctionalInterface
    public interface Off {
        Off NOTHING = () -> {
        };

        void off() throws Exception;

        /** {@code off}, with what the fault did when it chose among several (recorded instead of its name). */
        static Off described(String what, Off off) {
            return new Described(what, off);
        }
    }

    private record Described(String what, Off then) implements Off {

        @Override
        public void off() throws Exception {
            then.off();
        }
    }

    /**
     * One registered fault: {@code weight} against the others, on for a random time in [{@code minOn},
     * {@code maxOn}].
     */
    private record Entry(String name, double weight, Duration minOn, Duration maxOn, Switch fault,
            AtomicBoolean active) {
    }

    private final long seed;
    private final Random random;
    private final Duration minGap;
    private final Duration maxGap;
    private final BiConsumer<String, Long> record;
    private final List<Entry> entries = new ArrayList<>();
    private final List<Off> pending = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    private final ScheduledExecutorService offs = Executors.newScheduledThreadPool(3, r -> {
        Thread t = new Thread(r, "nemesis-off");
        t.setDaemon(true);
        return t;
    });
    private final CountDownLatch stop = new CountDownLatch(1);
    private Thread thread;
    private volatile boolean stopped;
    private int fired;

    /**
     * @param record told of every fault as it is switched on, with what it is and when ({@link System#nanoTime()})
     */
    Nemesis(long seed, Duration minGap, Duration maxGap, BiConsumer<String, Long> record) {
        this.seed = seed;
        this.random = new Random(seed);
        this.minGap = minGap;
        this.maxGap = maxGap;
        this.record = record;
    }

    /** Registers a fault; before {@link #start()}. */
    public Nemesis add(String name, double weight, Duration minOn, Duration maxOn, Switch fault) {
        entries.add(new Entry(name, weight, minOn, maxOn, fault, new AtomicBoolean()));
        return this;
    }

    Nemesis start() {
        thread = new Thread(this::loop, "nemesis-" + seed);
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /** How many faults were switched on so far. */
    synchronized int fired() {
        return fired;
    }

    /** Faults that could not be switched on or off: the run did not get the faults it claims. */
    synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    private void loop() {
        while (!stopped) {
            try {
                if (stop.await(between(minGap, maxGap).toMillis(), TimeUnit.MILLISECONDS)) {
                    return;
                }
            }
            catch (InterruptedException ex) {
                return;
            }
            Entry entry = draw();
            if (entry == null || stopped) {
                continue;
            }
            Duration on = between(entry.minOn(), entry.maxOn());
            Random faultRandom = new Random(random.nextLong());
            entry.active().set(true);
            Off off;
            long at = System.nanoTime();
            try {
                off = entry.fault().on(faultRandom);
            }
            catch (Exception ex) {
                entry.active().set(false);
                error("could not switch on " + entry.name() + ": " + ex);
                continue;
            }
            Off once = once(entry, off);
            synchronized (this) {
                fired++;
                pending.add(once);
            }
            record.accept((off instanceof Described d ? d.what() : entry.name()) + " for " + on.toMillis() + " ms", at);
            offs.schedule(() -> switchOff(once), on.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** A random entry among those not on, by weight; null when all are on. */
    private Entry draw() {
        List<Entry> free = entries.stream().filter(e -> !e.active().get()).toList();
        double total = free.stream().mapToDouble(Entry::weight).sum();
        double pick = random.nextDouble() * total;
        for (Entry e : free) {
            pick -= e.weight();
            if (pick < 0) {
                return e;
            }
        }
        return null;
    }

    private Off once(Entry entry, Off off) {
        AtomicBoolean done = new AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                try {
                    off.off();
                }
                finally {
                    entry.active().set(false);
                }
            }
        };
    }

    private void switchOff(Off off) {
        try {
            off.off();
        }
        catch (Exception ex) {
            error("could not switch a fault off: " + ex);
        }
        finally {
            synchronized (this) {
                pending.remove(off);
            }
        }
    }

    private Duration between(Duration min, Duration max) {
        long span = max.toMillis() - min.toMillis();
        return Duration.ofMillis(min.toMillis() + (span <= 0 ? 0 : (long) (random.nextDouble() * span)));
    }

    private synchronized void error(String what) {
        log.error("nemesis " + seed + ": " + what);
        errors.add(what);
    }

    /** Stops firing and switches every fault still on off now, so the run can end on a healthy system. */
    @Override
    public void close() throws InterruptedException {
        stopped = true;
        stop.countDown();
        if (thread != null) {
            // Not interrupted: a fault half switched on (a server half started) would be left in between.
            thread.join(TestTiming.seconds(120).toMillis());
        }
        // Offs already running finish; offs still waiting for their time run below, at once.
        ((ScheduledThreadPoolExecutor) offs).setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        offs.shutdown();
        offs.awaitTermination(TestTiming.seconds(120).toMillis(), TimeUnit.MILLISECONDS);
        List<Off> still;
        synchronized (this) {
            still = new ArrayList<>(pending);
        }
        still.forEach(this::switchOff);
    }
}
