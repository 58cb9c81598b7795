package dev.lease.samples.leader.demo;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Faults the demo injects into a run of the leader-only job, on the job's own thread, when it announces the batch it
 * prepares: the run is held there until {@link Fault#release()}, in one of two ways.
 */
final class JobThreadFaults {

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
        private final Mode mode;
        private final CountDownLatch struck = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile boolean interrupted;

        private Fault(String instance, Mode mode) {
            this.instance = instance;
            this.mode = mode;
        }

        /** Waits until a run of the job is held by this fault. */
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
                    timeline.note(instance, "INTERRUPTED", "the job thread is interrupted in its slow call");
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
                        timeline.note(instance, "INTERRUPTED", "the interrupt reaches the job thread, which does not "
                                + "notice it: the call it is stuck in swallows it");
                    }
                }
            }
        }
    }

    private final Timeline timeline;
    private final Duration patience;
    private final Map<String, Fault> armed = new ConcurrentHashMap<>();
    private final List<Fault> made = new CopyOnWriteArrayList<>();

    JobThreadFaults(Timeline timeline, Duration patience) {
        this.timeline = timeline;
        this.patience = patience;
    }

    /** Arms a fault for the next run of {@code instance}'s job. */
    Fault arm(String instance, Mode mode) {
        Fault fault = new Fault(instance, mode);
        made.add(fault);
        armed.put(instance, fault);
        return fault;
    }

    /** Called on the job's thread when it announces a batch: holds it if a fault is armed for this instance. */
    void strike(String instance) {
        Fault fault = armed.remove(instance);
        if (fault != null) {
            fault.hold();
        }
    }

    /** Disarms every fault and lets every held run go on, so that the instances can shut down. */
    void releaseAll() {
        armed.clear();
        made.forEach(Fault::release);
    }
}
