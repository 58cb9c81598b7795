package dev.lease.core;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.lease.spi.LeaseBackend;

/**
 * One engine's local queues, one per (backend, name) that threads of this engine wait for, so that at most one of
 * them asks the store for the name at a time. Without them every waiting thread would poll and be woken by the
 * store on its own, so a release cost a grant request per waiter.
 *
 * <p>The thread that holds the line is the <em>contender</em> (it asks the store, waits for the store's release
 * signal and backs off, as a lone waiter does) and, once granted, the <em>holder</em>; the other waiting threads
 * park here in arrival order. When the holder's grant is released at the store, or declared lost, the first of them
 * becomes the contender at once and asks the store without waiting for a watch, a message or a poll. It gets its own
 * grant, with its own fencing token: nothing granted to one thread is ever passed to another.
 *
 * <p>Fairness to other processes: the store arbitrates between contenders, and this engine's contender is one of
 * them. Because a local release wakes the next local waiter sooner than the store's signal reaches other processes,
 * a name is handed over locally at most {@link #MAX_LOCAL_STREAK} times in a row: the next local waiter then becomes
 * contender while the name is still held, and so waits for the release the way waiters elsewhere do (the store's
 * signal, or the backoff), on equal terms with them.
 *
 * <p>A thread that already holds or contends for a name (asking again for a name it holds) does not queue behind
 * itself: it asks the store directly, as it did before queues existed.
 */
final class LocalLines {

    /** How many times in a row a name passes from a local holder to a local waiter before competing on equal terms. */
    static final int MAX_LOCAL_STREAK = 16;

    /** What {@link #join} returns to a thread that must not queue behind itself; every other method ignores it. */
    static final Ticket DIRECT = new Ticket(null, null);

    private final Map<Key, Line> lines = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * Queues the calling thread for the name until it is the contender, its deadline passes, it is interrupted or the
     * engine closes.
     *
     * @param deadline when the caller stops waiting, on {@code clock}
     * @param shuttingDown what to throw when the engine closes (before or while queued)
     * @return the caller's ticket, now the contender; {@link #DIRECT} when the caller already holds or contends for
     *         the name; null when its deadline passed while it queued
     * @throws InterruptedException when interrupted while queued; the ticket has left the queue
     */
    Ticket join(LeaseBackend<?> backend, String name, long deadline, LongSupplier clock,
            Supplier<RuntimeException> shuttingDown) throws InterruptedException {
        if (closed) {
            throw shuttingDown.get();
        }
        Key key = new Key(backend, name);
        Line line = lines.compute(key, (k, existing) -> {
            Line used = existing != null ? existing : new Line();
            used.users++;
            return used;
        });
        Ticket ticket = new Ticket(key, line);
        boolean queued = false;
        line.lock.lock();
        try {
            if (line.isHeldOrContendedBy(ticket.thread)) {
                ticket.ended = true;
                return DIRECT;
            }
            if (line.contender == null && line.holder == null) {
                line.contender = ticket;
                return ticket;
            }
            line.waiting.addLast(ticket);
            queued = true;
            if (line.holder != null && line.holder.onWaiter != null) {
                line.holder.onWaiter.run();
            }
            while (line.contender != ticket) {
                if (closed) {
                    throw shuttingDown.get();
                }
                long left = deadline - clock.getAsLong();
                if (left <= 0) {
                    return null;
                }
                // Bounded by a second, so that a clock that is not the real one (tests) is read again.
                ticket.turn.awaitNanos(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
            }
            queued = false;
            return ticket;
        }
        finally {
            if (queued) {
                // Timed out, interrupted or closed while queued: leave so that nobody waits behind this thread, and
                // pass the turn on if it had just been given to it.
                line.waiting.remove(ticket);
                if (line.contender == ticket) {
                    line.contender = null;
                    line.promoteIfFree(false);
                }
                ticket.ended = true;
            }
            boolean release = ticket.ended;
            line.lock.unlock();
            if (release) {
                unref(key, line);
            }
        }
    }

    /**
     * The contender was granted the name: it is now the holder, and the line stays with it until {@link #released}.
     *
     * @param firstAttempt whether the grant came at its first request, so that the name went straight from the
     *        previous local holder to it
     */
    void granted(Ticket ticket, boolean firstAttempt) {
        Line line = ticket.line;
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            if (line.contender != ticket || ticket.ended) {
                return;
            }
            line.contender = null;
            // A previous holder may not be freed yet: its release reached the store, its hook has yet to run.
            line.holder = ticket;
            ticket.holding = true;
            line.streak = ticket.handedOver && firstAttempt ? line.streak + 1 : 0;
            if (line.streak >= MAX_LOCAL_STREAK) {
                // The next waiter goes to the store now and waits for this release as waiters elsewhere do.
                line.streak = 0;
                line.promote(false);
            }
        }
        finally {
            line.lock.unlock();
        }
    }

    /**
     * Runs {@code hook} (under the line's lock, so briefly) each time a thread queues behind the grant of
     * {@code ticket}, a holder; no-op for {@link #DIRECT}.
     */
    void whenWaiterQueued(Ticket ticket, Runnable hook) {
        if (ticket.line != null) {
            ticket.onWaiter = hook;
        }
    }

    /** The holder's grant was released at the store, or declared lost: the next waiter asks the store at once. */
    void released(Ticket ticket) {
        end(ticket, true);
    }

    /** The contender stops asking (granted nothing before its deadline, failed, interrupted); no-op for a holder. */
    void leave(Ticket ticket) {
        end(ticket, false);
    }

    private void end(Ticket ticket, boolean asHolder) {
        Line line = ticket.line;
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            if (ticket.ended) {
                return;
            }
            if (asHolder && ticket.holding) {
                if (line.holder == ticket) {
                    line.holder = null;
                    line.promoteIfFree(true);
                }
            }
            else if (!asHolder && line.contender == ticket) {
                line.contender = null;
                line.promoteIfFree(false);
            }
            else {
                return;
            }
            ticket.ended = true;
        }
        finally {
            line.lock.unlock();
        }
        unref(ticket.key, line);
    }

    /** Wakes every queued thread, which then fails with the engine's shutdown outcome; nobody queues afterwards. */
    void close() {
        closed = true;
        for (Line line : lines.values()) {
            line.lock.lock();
            try {
                line.waiting.forEach(waiter -> waiter.turn.signal());
            }
            finally {
                line.lock.unlock();
            }
        }
    }

    /** How many names have a line now: a line is dropped when its last thread leaves, so idle names cost nothing. */
    int size() {
        return lines.size();
    }

    /** How many threads are queued behind the contender or holder of the name. */
    int queued(LeaseBackend<?> backend, String name) {
        Line line = lines.get(new Key(backend, name));
        if (line == null) {
            return 0;
        }
        line.lock.lock();
        try {
            return line.waiting.size();
        }
        finally {
            line.lock.unlock();
        }
    }

    private void unref(Key key, Line line) {
        lines.computeIfPresent(key, (k, current) -> current != line || --current.users > 0 ? current : null);
    }

    private record Key(LeaseBackend<?> backend, String name) {
    }

    /** The queue of one name. All fields but {@link #users} are guarded by {@link #lock}. */
    private static final class Line {

        final ReentrantLock lock = new ReentrantLock();
        /** Tickets that have not ended; changed only inside the map's compute, which drops the line at zero. */
        int users;
        Ticket holder;
        Ticket contender;
        final ArrayDeque<Ticket> waiting = new ArrayDeque<>();
        /** Grants in a row that went straight from a local holder to a local waiter. */
        int streak;

        boolean isHeldOrContendedBy(Thread thread) {
            return holder != null && holder.thread == thread || contender != null && contender.thread == thread;
        }

        void promoteIfFree(boolean handedOver) {
            if (contender == null && holder == null) {
                promote(handedOver);
            }
        }

        void promote(boolean handedOver) {
            Ticket next = waiting.pollFirst();
            if (next != null) {
                next.handedOver = handedOver;
                contender = next;
                next.turn.signal();
            }
        }
    }

    /** One thread's place in a line, from joining until it stops contending or its grant stops blocking the name. */
    static final class Ticket {

        private final Key key;
        private final Line line;
        private final Thread thread = Thread.currentThread();
        private final Condition turn;
        /** Made contender by a local release (rather than by arriving at an empty line or by a fair turn). */
        private boolean handedOver;
        /** Granted: it leaves when its grant is freed, not when its contention ends. */
        private boolean holding;
        /** Run, under the line's lock, each time a thread queues behind this ticket's grant. */
        private volatile Runnable onWaiter;
        private boolean ended;

        private Ticket(Key key, Line line) {
            this.key = key;
            this.line = line;
            this.turn = line == null ? null : line.lock.newCondition();
        }
    }
}
