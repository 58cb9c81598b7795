package dev.lease.samples.leader.demo;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Faults the demo injects into an instance's threads where they announce what they do: the job's thread when a run
 * announces the batch it prepares, the relay's thread when it has sent a batch in a Kafka transaction not committed
 * yet. The thread is held there until {@link Fault#release()}, in one of two ways.
 */
final class ThreadFaults {

    /** Where a fault strikes. */
    enum Site {
        /** The leader-only job's thread, as a run prepares a batch ({@code PREPARES}). */
        JOB("job"),
        /** The outbox relay's thread, with a batch sent in an open Kafka transaction ({@code RELAYING}). */
        RELAY("relay");

        private final String thread;

        Site(String thread) {
            this.thread = thread;
        }
    }

    /** How a held run behaves. */
    enum Mode {
        /** A long call that stops when the thread is interrupted, as {@code Thread.sleep} or a JDBC wait does. */
        SLOW,
        /**
         * A call that ignores interrupts: it swallows every {@code InterruptedException} and waits on. Stands for a
         * thread that cannot notice the interrupt in time, such as one frozen by a GC pause or a stalled VM.
         */
        DEAF
    }

    /** A fault armed for an instance's next run; struck once. */
    final class Fault {

        private final String instance;
        private final Site site;
        private final Mode mode;
        private final CountDownLatch struck = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile boolean interrupted;

        private Fault(String instance, Site site, Mode mode) {
            this.instance = instance;
            this.site = site;
            this.mode = mode;
        }

        /** Waits until the thread is held by this fault. */
        boolean awaitStruck(Duration max) throws InterruptedException {
            return struck.await(max.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** Whether the held thread was interrupted. */
        boolean interrupted() {
            return interrupted;
        }

        /** Lets the held run go on. */
        void release() {
            released.countDown();
        }

        private void hold() {
            struck.countDown();
            if (mode == Mode.SLOW) {
                try {
                    // Bounded, so that a demo whose interrupt never comes ends with a problem, not a hang.
                    released.await(patience.toMillis(), TimeUnit.MILLISECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                    timeline.note(instance, "INTERRUPTED", "the " + site.thread
                            + " thread is interrupted in its slow call");
                    // Handed on, as a well-behaved call does: the job's next blocking step throws at once.
                    Thread.currentThread().interrupt();
                }
                return;
            }
            long deadline = System.nanoTime() + patience.toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    if (released.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                        return;
                    }
                }
                catch (InterruptedException ex) {
                    // Swallowed on purpose, flag cleared: this is the call that does not notice the interrupt.
                    if (!interrupted) {
                        interrupted = true;
                        timeline.note(instance, "INTERRUPTED", "the interrupt reaches the " + site.thread + " thread, "
                                + "which does not notice it: the call it is stuck in swallows it");
                    }
                }
            }
        }
    }

    private final Timeline timeline;
    private final Duration patience;
    private final Map<String, Fault> armed = new ConcurrentHashMap<>();
    private final List<Fault> made = new CopyOnWriteArrayList<>();

    ThreadFaults(Timeline timeline, Duration patience) {
        this.timeline = timeline;
        this.patience = patience;
    }

    /** Arms a fault for the next time {@code instance}'s thread passes {@code site}. */
    Fault arm(String instance, Site site, Mode mode) {
        Fault fault = new Fault(instance, site, mode);
        made.add(fault);
        armed.put(instance + "/" + site, fault);
        return fault;
    }

    /**
     * Called on the thread that passes {@code site}: if a fault is armed there for this instance, runs
     * {@code beforeHolding} and holds the thread.
     */
    void strike(String instance, Site site, Runnable beforeHolding) {
        Fault fault = armed.remove(instance + "/" + site);
        if (fault != null) {
            beforeHolding.run();
            fault.hold();
        }
    }

    /** Disarms every fault and lets every held run go on, so that the instances can shut down. */
    void releaseAll() {
        armed.clear();
        made.forEach(Fault::release);
    }
}
