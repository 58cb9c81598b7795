package dev.lease.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LossListener;

/**
 * Leases kept in this JVM's memory: fenced, exclusive and expiring for real, but only among the threads of one
 * process. For tests, and for applications that run as a single instance. Its "server clock" for expiry is this
 * JVM's monotonic clock.
 *
 * <p>Tokens are seeded from the wall clock, because a fenced table outlives the process: each grant gets the larger
 * of the backend's previous token (of any name) + 1 and the current wall-clock time in microseconds since the epoch.
 * So within this JVM tokens strictly increase whatever the clock does (standing still or going back), and the first
 * token after a restart is above every token the earlier JVM issued, as long as
 * <ul>
 * <li>the wall clock did not go back across the restart, and</li>
 * <li>the earlier JVM's grants (of all names together) never outran one per microsecond for long (each grant faster
 * than that puts the token one microsecond ahead of the clock, and the restart must take longer than that lead).</li>
 * </ul>
 * If either fails (a clock set back by hand or by a large NTP step), a fenced resource refuses the new tokens with
 * {@link dev.lease.fence.StaleTokenException} until the clock has caught up; it never accepts a stale write.
 *
 * <p>Memory stays bounded by the names in use, not the names ever used: a name's state is dropped once it is neither
 * held nor waited on (names often come from request data, {@code invoice-#{#id}}). Since tokens come from one counter
 * for all names, a name granted again after its state was dropped still gets a higher token.
 */
public final class InMemoryLeaseBackend implements LeaseBackend<InMemoryLeaseBackend.MemoryGrant> {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "in-memory";

    /** How many names' last tokens {@link #lastToken} remembers after their state is dropped. */
    static final int REMEMBERED_RELEASES = 1_024;

    /** A sweep of expired, unreleased names after this many new names, so that memory stays bounded without one. */
    static final int SWEEP_EVERY = 4_096;

    private static final BackendTraits TRAITS = BackendTraits.fenced()
            .withRenewsInOneCall(true)
            .withBoundsCallsByDeadline(true);

    private final Map<String, Slot> slots = new ConcurrentHashMap<>();
    private final LongSupplier wallClockMicros;
    private final AtomicLong lastIssued = new AtomicLong();
    private final AtomicInteger createdSinceSweep = new AtomicInteger();
    private final RecentTokens recentTokens = new RecentTokens(REMEMBERED_RELEASES);

    /** Tokens seeded from this machine's wall clock. */
    public InMemoryLeaseBackend() {
        this(InMemoryLeaseBackend::epochMicros);
    }

    /** @param wallClockMicros the wall-clock time in microseconds since the epoch; tests pass a clock they control */
    InMemoryLeaseBackend(LongSupplier wallClockMicros) {
        this.wallClockMicros = wallClockMicros;
    }

    private static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Fenced. One {@link #renewAll} call confirms a whole batch: one pass over the map. No I/O here: a grant request
     * takes microseconds, so the engine need not hand it to another thread.
     */
    @Override
    public BackendTraits traits() {
        return TRAITS;
    }

    @Override
    public Optional<MemoryGrant> tryAcquire(GrantRequest request) {
        while (true) {
            Slot slot = slotOf(request.name());
            synchronized (slot) {
                if (slot.dropped) {
                    continue;
                }
                long now = System.nanoTime();
                if (slot.isHeld(now)) {
                    return Optional.empty();
                }
                long wallClock = wallClockMicros.getAsLong();
                slot.token = lastIssued.updateAndGet(last -> Math.max(last + 1, wallClock));
                slot.owner = UUID.randomUUID().toString();
                slot.ttlNanos = request.ttl().toNanos();
                slot.expiresAt = now + slot.ttlNanos;
                slot.onLoss = request.onLoss();
                return Optional.of(new MemoryGrant(request.name(), slot.token, slot.owner));
            }
        }
    }

    private Slot slotOf(String name) {
        Slot slot = slots.get(name);
        if (slot != null) {
            return slot;
        }
        Slot created = new Slot();
        slot = slots.putIfAbsent(name, created);
        if (slot != null) {
            return slot;
        }
        if (createdSinceSweep.incrementAndGet() >= SWEEP_EVERY) {
            createdSinceSweep.set(0);
            sweep();
        }
        return created;
    }

    /** Drops every name that is free (released or expired) and waited on by nobody. */
    private void sweep() {
        long now = System.nanoTime();
        slots.forEach((name, slot) -> {
            synchronized (slot) {
                dropIfUnused(name, slot, now);
            }
        });
    }

    /** Called holding {@code slot}'s lock; a thread that finds a dropped slot looks the name up again. */
    private void dropIfUnused(String name, Slot slot, long now) {
        if (!slot.dropped && !slot.isHeld(now) && slot.waiters == 0) {
            slot.dropped = true;
            slots.remove(name, slot);
            if (slot.token != 0) {
                recentTokens.put(name, slot.token);
            }
        }
    }

    /** The number of names whose state this backend keeps; bounded by the names held or waited on. */
    int namesKept() {
        return slots.size();
    }

    @Override
    public boolean renew(MemoryGrant g) {
        Slot slot = slots.get(g.name());
        if (slot == null) {
            return false;
        }
        synchronized (slot) {
            long now = System.nanoTime();
            if (!slot.isHeldBy(g, now)) {
                return false;
            }
            slot.expiresAt = now + slot.ttlNanos;
            return true;
        }
    }

    /** Each grant checked and extended under its own name's lock, as {@link #renew} does; no store to save trips to. */
    @Override
    public Set<MemoryGrant> renewAll(Collection<MemoryGrant> grants) {
        Set<MemoryGrant> lost = new HashSet<>();
        for (MemoryGrant g : grants) {
            Slot slot = slots.get(g.name());
            if (slot == null) {
                lost.add(g);
                continue;
            }
            synchronized (slot) {
                long now = System.nanoTime();
                if (slot.isHeldBy(g, now)) {
                    slot.expiresAt = now + slot.ttlNanos;
                }
                else {
                    lost.add(g);
                }
            }
        }
        return lost;
    }

    @Override
    public void release(MemoryGrant g) {
        Slot slot = slots.get(g.name());
        if (slot == null) {
            return;
        }
        synchronized (slot) {
            if (g.owner().equals(slot.owner) && g.value() == slot.token) {
                slot.free();
                dropIfUnused(g.name(), slot, System.nanoTime());
            }
        }
    }

    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        Slot slot = slots.get(name);
        if (slot == null) {
            return;
        }
        synchronized (slot) {
            long now = System.nanoTime();
            if (slot.dropped || !slot.isHeld(now)) {
                return;
            }
            long millis = Math.max(1, Math.min(maxWait.toMillis(), Duration.ofNanos(slot.expiresAt - now).toMillis() + 1));
            slot.waiters++;
            try {
                slot.wait(millis);
            }
            finally {
                slot.waiters--;
                dropIfUnused(name, slot, System.nanoTime());
            }
        }
    }

    /**
     * Takes the lease away from its holder, as an operator or a split brain would, and tells the holder at once, as
     * a ZooKeeper watch on a deleted holder would: the engine declares the lease lost and interrupts the section
     * running under it. For tests of what happens on loss.
     *
     * @return whether a holder was there
     */
    public boolean revoke(String name) {
        Slot slot = slots.get(name);
        if (slot == null) {
            return false;
        }
        LossListener told;
        synchronized (slot) {
            boolean held = slot.isHeld(System.nanoTime());
            told = held ? slot.onLoss : null;
            slot.free();
            dropIfUnused(name, slot, System.nanoTime());
        }
        if (told != null) {
            told.leaseLost("revoked: the in-memory lease was taken away (InMemoryLeaseBackend.revoke)");
        }
        return told != null;
    }

    /**
     * The last token granted for {@code name} by this backend, if it granted the name and still remembers it: while
     * the name is held or waited on, and for the {@value #REMEMBERED_RELEASES} names released most recently after that.
     * Tokens are wall-clock microseconds or the previous token + 1, whichever is larger (see the class comment for when
     * they stay above an earlier JVM's): compare them, never count on their values.
     */
    public OptionalLong lastToken(String name) {
        Slot slot = slots.get(name);
        if (slot != null) {
            synchronized (slot) {
                if (!slot.dropped && slot.token != 0) {
                    return OptionalLong.of(slot.token);
                }
            }
        }
        return recentTokens.get(name);
    }

    private static final class Slot {
        boolean dropped;
        int waiters;
        long token;
        String owner;
        long ttlNanos;
        long expiresAt;
        LossListener onLoss;

        boolean isHeld(long now) {
            return owner != null && now - expiresAt < 0;
        }

        boolean isHeldBy(MemoryGrant grant, long now) {
            return isHeld(now) && grant.owner().equals(owner) && grant.value() == token;
        }

        void free() {
            owner = null;
            onLoss = null;
            notifyAll();
        }
    }

    /** The last tokens of the names dropped most recently, for {@link #lastToken}. */
    private static final class RecentTokens {
        private final Map<String, Long> tokens;

        RecentTokens(int capacity) {
            this.tokens = new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                    return size() > capacity;
                }
            };
        }

        synchronized void put(String name, long token) {
            tokens.remove(name);
            tokens.put(name, token);
        }

        synchronized OptionalLong get(String name) {
            Long token = tokens.get(name);
            return token == null ? OptionalLong.empty() : OptionalLong.of(token);
        }
    }

    record MemoryGrant(String name, long value, String owner) implements Grant {

        @Override
        public OptionalLong token() {
            return OptionalLong.of(value);
        }
    }
}
