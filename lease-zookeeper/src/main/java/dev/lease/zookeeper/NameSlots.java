package dev.lease.zookeeper;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.lease.spi.GrantRequest;

/**
 * One grant attempt (or abandon) per name at a time in a backend: a holder znode of ours that no live grant claims is
 * then certainly an orphan ({@link OurHolders#removeOrphan}), not a grant another thread is about to register. Each
 * name with an attempt in flight has a latch, counted down when the attempt ends.
 */
final class NameSlots {

    private final Map<String, CountDownLatch> acquiring = new ConcurrentHashMap<>();
    private final LiveGrants live;

    NameSlots(LiveGrants live) {
        this.live = live;
    }

    /**
     * Takes the name's slot, waiting until the deadline for a request of ours already in flight for it: its outcome
     * decides whether this one can be granted, and a request stuck on a dead connection must read as the store not
     * answering, not as the lease being busy.
     *
     * @return the slot, or null when the other request granted the lease meanwhile (then it is busy)
     * @throws TimeoutException when the other request is still unanswered at the deadline
     */
    CountDownLatch claim(GrantRequest request) throws InterruptedException, TimeoutException {
        CountDownLatch mine = new CountDownLatch(1);
        while (true) {
            CountDownLatch other = acquiring.putIfAbsent(request.name(), mine);
            if (other == null) {
                return mine;
            }
            long left = request.remaining().toNanos();
            if (left <= 0 || !other.await(left, TimeUnit.NANOSECONDS)) {
                throw new TimeoutException("ZooKeeper did not answer in time: another grant request of this process "
                        + "for lease '" + request.name() + "' is still unanswered (the store may be unreachable)");
            }
            if (live.holds(request.name())) {
                return null;
            }
        }
    }

    /** Takes the name's slot if it is free, without waiting; null when another attempt holds it. */
    CountDownLatch tryClaim(String name) {
        CountDownLatch slot = new CountDownLatch(1);
        return acquiring.putIfAbsent(name, slot) == null ? slot : null;
    }

    void free(String name, CountDownLatch slot) {
        acquiring.remove(name, slot);
        slot.countDown();
    }
}
