package dev.lease.core;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

import dev.lease.Lease;

/**
 * The leased sections the current thread is in, innermost first. Internal: public only so that
 * {@link dev.lease.LeaseContext} can read it; applications use {@code LeaseContext}.
 */
public final class ThreadLeases {

    private static final ThreadLocal<Frames> FRAMES = new ThreadLocal<>();

    private ThreadLeases() {
    }

    /** The innermost lease of the current thread. */
    public static Optional<Lease> innermost() {
        Frames frames = FRAMES.get();
        return frames == null ? Optional.empty() : Optional.ofNullable(frames.innermost());
    }

    /** The innermost lease of the current thread with this name. */
    public static Optional<Lease> find(String name) {
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
     * leaving a section take the same lock, so a thread that has left the section of a lost lease is never
     * interrupted for it, and an interrupt this class delivered is cleared before the thread leaves the last
     * section it concerned.
     */
    static final class Frames {

        private final Thread thread;
        private final Deque<HeldLease> stack = new ArrayDeque<>();
        private boolean interruptedByUs;
        private boolean interruptedBefore;

        Frames(Thread thread) {
            this.thread = thread;
        }

        String threadName() {
            return "thread '" + thread.getName() + "'";
        }

        synchronized void push(HeldLease lease) {
            stack.push(lease);
        }

        synchronized HeldLease innermost() {
            return stack.peek();
        }

        synchronized HeldLease find(String name) {
            for (HeldLease lease : stack) {
                if (lease.name().equals(name)) {
                    return lease;
                }
            }
            return null;
        }

        /** Interrupts the thread if it is still inside a section of {@code lease}. */
        synchronized void interruptFor(HeldLease lease) {
            if (!stack.contains(lease) || interruptedByUs) {
                return;
            }
            interruptedBefore = thread.isInterrupted();
            interruptedByUs = true;
            thread.interrupt();
        }

        /** Leaves the innermost section of {@code lease}; must be called by the thread itself. */
        synchronized void exit(HeldLease lease) {
            stack.removeFirstOccurrence(lease);
            if (interruptedByUs && !anyLost()) {
                // Our interrupt told the section to stop; it must not leak into code after it. An interrupt
                // that was pending before ours belongs to someone else and is restored.
                Thread.interrupted();
                if (interruptedBefore) {
                    thread.interrupt();
                }
                interruptedByUs = false;
            }
            if (stack.isEmpty()) {
                FRAMES.remove();
            }
        }

        private boolean anyLost() {
            for (Iterator<HeldLease> it = stack.iterator(); it.hasNext();) {
                // Only a declared loss: a deadline that a renewal in flight may still move must not keep an
                // interrupt alive that was meant for the section being left.
                if (it.next().isMarkedLost()) {
                    return true;
                }
            }
            return false;
        }
    }
}
