package dev.lease.memory;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Leases kept in this JVM's memory: fenced, exclusive and expiring for real, but only among the threads of one
 * process. For tests, and for applications that run as a single instance. Its "server clock" is this JVM's
 * monotonic clock.
 */
public final class InMemoryLeaseBackend implements LeaseBackend {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "in-memory";

    private final Map<String, Slot> slots = new ConcurrentHashMap<>();

    @Override
    public String id() {
        return ID;
    }

    @Override
    public boolean issuesFencingTokens() {
        return true;
    }

    @Override
    public Optional<Grant> tryAcquire(GrantRequest request) {
        Slot slot = slots.computeIfAbsent(request.name(), n -> new Slot());
        synchronized (slot) {
            long now = System.nanoTime();
            if (slot.isHeld(now)) {
                return Optional.empty();
            }
            slot.token++;
            slot.owner = UUID.randomUUID().toString();
            slot.ttlNanos = request.ttl().toNanos();
            slot.expiresAt = now + slot.ttlNanos;
            return Optional.of(new MemoryGrant(request.name(), slot.token, slot.owner));
        }
    }

    @Override
    public boolean renew(Grant grant) {
        MemoryGrant g = (MemoryGrant) grant;
        Slot slot = slots.get(g.name());
        synchronized (slot) {
            long now = System.nanoTime();
            if (!slot.isHeldBy(g, now)) {
                return false;
            }
            slot.expiresAt = now + slot.ttlNanos;
            return true;
        }
    }

    @Override
    public void release(Grant grant) {
        MemoryGrant g = (MemoryGrant) grant;
        Slot slot = slots.get(g.name());
        synchronized (slot) {
            if (g.owner().equals(slot.owner) && g.value() == slot.token) {
                slot.free();
            }
        }
    }

    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        Slot slot = slots.computeIfAbsent(name, n -> new Slot());
        synchronized (slot) {
            long now = System.nanoTime();
            if (slot.isHeld(now)) {
                long millis = Math.max(1, Math.min(maxWait.toMillis(), Duration.ofNanos(slot.expiresAt - now).toMillis() + 1));
                slot.wait(millis);
            }
        }
    }

    /**
     * Takes the lease away from its holder, as an operator or a split brain would: the holder's next renewal
     * fails. For tests of what happens on loss.
     *
     * @return whether a holder was there
     */
    public boolean revoke(String name) {
        Slot slot = slots.get(name);
        if (slot == null) {
            return false;
        }
        synchronized (slot) {
            boolean held = slot.isHeld(System.nanoTime());
            slot.free();
            return held;
        }
    }

    /** The last token granted for {@code name}, if it was ever granted. */
    public OptionalLong lastToken(String name) {
        Slot slot = slots.get(name);
        if (slot == null) {
            return OptionalLong.empty();
        }
        synchronized (slot) {
            return slot.token == 0 ? OptionalLong.empty() : OptionalLong.of(slot.token);
        }
    }

    private static final class Slot {
        long token;
        String owner;
        long ttlNanos;
        long expiresAt;

        boolean isHeld(long now) {
            return owner != null && now - expiresAt < 0;
        }

        boolean isHeldBy(MemoryGrant grant, long now) {
            return isHeld(now) && grant.owner().equals(owner) && grant.value() == token;
        }

        void free() {
            owner = null;
            notifyAll();
        }
    }

    private record MemoryGrant(String name, long value, String owner) implements Grant {

        @Override
        public OptionalLong token() {
            return OptionalLong.of(value);
        }
    }
}
