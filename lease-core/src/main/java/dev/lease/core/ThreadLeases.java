package dev.lease.core;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

import dev.lease.Lease;
import dev.lease.LeaseContext;

/**
 * The leased sections the current thread is in, innermost first. Applications read them through
 * {@link LeaseContext}, which this class installs its read side into before any lease is bound (the class is
 * initialised by the first {@link #enter}), so that the contract package does not depend on the engine.
 */
final class ThreadLeases {

    private static final ThreadLocal<Frames> FRAMES = new ThreadLocal<>();

    static {
        LeaseContext.install(new LeaseContext.Binding() {
            @Override
            public Optional<Lease> innermost() {
                return ThreadLeases.innermost();
            }

            @Override
            public Optional<Lease> find(String name) {
                return ThreadLeases.find(name);
            }

            @Override
            public Optional<Lease> innermostWithToken() {
                Frames frames = FRAMES.get();
                return frames == null ? Optional.empty() : Optional.ofNullable(frames.innermostWithToken());
            }

            @Override
            public String toString() {
                return "the lease engine's thread binding (" + ThreadLeases.class.getName() + ")";
            }
        });
    }

    private ThreadLeases() {
    }

    /** The innermost lease of the current thread. */
    static Optional<Lease> innermost() {
        Frames frames = FRAMES.get();
        return frames == null ? Optional.empty() : Optional.ofNullable(frames.innermost());
    }

    /** The innermost lease of the current thread with this name. */
    static Optional<Lease> find(String name) {
        return findHeld(name).map(Lease.class::cast);
    }

    static Optional<HeldLease> findHeld(String name) {
        Frames frames = FRAMES.get();
        return frames == null ? Optional.empty() : Optional.ofNullable(frames.find(name));
    }

    /** Enters a section holding {@code lease} on the current thread; pair with {@link Frames#exit}. */
    static Frames enter(HeldLease lease) {
        Frames frames = FRAMES.get();
        if (frames == null) {
            frames = new Frames(Thread.currentThread());
            FRAMES.set(frames);
        }
        frames.push(lease);
        return frames;
    }

    /**
     * One thread's stack of sections, and the only place that interrupts that thread. Delivering an interrupt and
     * leaving a section take the same lock, so a thread that has left every section of a lost lease is never
     * interrupted for it.
     *
     * <p>The rule is one invariant rather than a flag per loss: while the thread is inside any section whose lease
     * was declared lost, it carries an interrupt; once it has left the last such section, the interrupts this class
     * delivered are gone and an interrupt that was pending before the first of them is back. Every loss of a lease
     * the thread is in interrupts again (an inner section may have used up the previous interrupt), and leaving a
     * section delivers the interrupt again when an enclosing section is lost, whatever order the leases were lost in.
     */
    static final class Frames {

        private final Thread thread;
        private final Deque<HeldLease> stack = new ArrayDeque<>();
        /** Whether the thread carries, or has used up, an interrupt delivered here that has not been withdrawn. */
        private boolean interruptedByUs;
        /** Whether an interrupt not ours was pending when we delivered the first of ours. */
        private boolean interruptedBefore;

        Frames(Thread thread) {
            this.thread = thread;
        }

        /** The thread itself; its name is read without this object's lock, so a lease's own lock may be held. */
        Thread thread() {
            return thread;
        }

        String threadName() {
            return "thread '" + thread.getName() + "'";
        }

        synchronized void push(HeldLease lease) {
            stack.push(lease);
            LogContext.show(lease);
        }

        synchronized HeldLease innermost() {
            return stack.peek();
        }

        synchronized HeldLease innermostWithToken() {
            for (HeldLease lease : stack) {
                if (lease.hasToken()) {
                    return lease;
                }
            }
            return null;
        }

        synchronized HeldLease find(String name) {
            for (HeldLease lease : stack) {
                if (lease.name().equals(name)) {
                    return lease;
                }
            }
            return null;
        }

        /** Interrupts the thread if it is still inside a section of {@code lease}; called once per declared loss. */
        synchronized void interruptFor(HeldLease lease) {
            if (!stack.contains(lease)) {
                return;
            }
            if (!interruptedByUs) {
                interruptedBefore = thread.isInterrupted();
                interruptedByUs = true;
            }
            thread.interrupt();
        }

        /** Leaves the innermost section of {@code lease}; must be called by the thread itself. */
        synchronized void exit(HeldLease lease) {
            stack.removeFirstOccurrence(lease);
            if (interruptedByUs) {
                if (anyLost()) {
                    // Still inside a lost section: the interrupt an inner section used up must reach it too.
                    thread.interrupt();
                }
                else {
                    // Our interrupts told lost sections to stop; they must not leak into code after them.
                    Thread.interrupted();
                    if (interruptedBefore) {
                        thread.interrupt();
                    }
                    interruptedByUs = false;
                }
            }
            LogContext.show(stack.peek());
            if (stack.isEmpty()) {
                FRAMES.remove();
            }
        }

        private boolean anyLost() {
            for (HeldLease held : stack) {
                // Only a declared loss: a passed deadline is declared (and interrupts) when the watchdog sees it.
                if (held.isMarkedLost()) {
                    return true;
                }
            }
            return false;
        }
    }
}
