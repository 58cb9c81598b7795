package dev.lease.core;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Who hears of one lease's loss, in this order: the threads running a section of it (interrupted at once), the
 * sections that run on no thread of their own (a reactive pipeline, told through a watcher), and the one waiting for
 * it to end (a leadership term's election). Once the loss is taken ({@link #take}), whoever comes later hears of it at
 * once.
 */
final class LossAudience {

    private static final Log log = LogFactory.getLog(LossAudience.class);

    /** The threads running a section of the lease: one for a leased call, any number for a leadership term. */
    private final List<ThreadLeases.Frames> boundTo = new ArrayList<>();
    /** Sections not bound to a thread, which an interrupt cannot reach. */
    private final List<Runnable> watchers = new ArrayList<>();
    private Runnable whenLost;
    private boolean taken;

    synchronized void bind(ThreadLeases.Frames frames) {
        boundTo.add(frames);
    }

    synchronized void unbind(ThreadLeases.Frames frames) {
        boundTo.remove(frames);
    }

    /** The section ended but the lease stays held (held over): nobody hears of a loss from now on. */
    synchronized void dismiss() {
        boundTo.clear();
        watchers.clear();
    }

    /** The names of the threads running a section now, or null when none does. */
    synchronized String threadNames() {
        return boundTo.isEmpty() ? null
                : boundTo.stream().map(frames -> frames.thread().getName()).collect(Collectors.joining(", "));
    }

    /** Runs {@code hook} once, after the threads and watchers heard of the loss: at once if it was taken. */
    void whenLost(Runnable hook) {
        synchronized (this) {
            if (!taken) {
                whenLost = hook;
                return;
            }
        }
        hook.run();
    }

    /**
     * Runs {@code watcher} when the loss is announced, right after the threads were interrupted: at once if it was
     * taken. Any number may watch.
     *
     * @return what stops the watching when the section ends first (a leadership term outlives many sections)
     */
    Runnable watch(Runnable watcher) {
        synchronized (this) {
            if (!taken) {
                watchers.add(watcher);
                return () -> {
                    synchronized (this) {
                        watchers.remove(watcher);
                    }
                };
            }
        }
        watcher.run();
        return () -> { };
    }

    /** The audience of the loss as it stands now; nobody joins it afterwards. */
    synchronized Loss take() {
        taken = true;
        List<Runnable> told = List.copyOf(watchers);
        watchers.clear();
        return new Loss(List.copyOf(boundTo), told, whenLost);
    }

    /** One lease's loss and who hears of it. */
    record Loss(List<ThreadLeases.Frames> threads, List<Runnable> watchers, Runnable whenLost) {

        /** Nobody runs a section: there is no work to interrupt. */
        boolean interruptsNothing() {
            return threads.isEmpty();
        }

        /** For the WARN line: {@code "; interrupting thread 'a', thread 'b'"}, or nothing. */
        String interrupting() {
            return threads.isEmpty() ? "" : "; interrupting "
                    + threads.stream().map(ThreadLeases.Frames::threadName).collect(Collectors.joining(", "));
        }

        /** Interrupting comes first: the work must stop as soon as possible, whatever a watcher does. */
        void interruptAndTell(HeldLease lease) {
            threads.forEach(bound -> bound.interruptFor(lease));
            watchers.forEach(Loss::runWatcher);
        }

        private static void runWatcher(Runnable watcher) {
            try {
                watcher.run();
            }
            catch (RuntimeException ex) {
                // One section's failure to hear of the loss must not keep the others, or the release, from it.
                log.error("A loss watcher failed", ex);
            }
        }
    }
}
