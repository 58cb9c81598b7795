package dev.lease.core;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A real backend (the in-memory one) that counts the grant requests it is sent, in all and per calling thread: how
 * many times the store is asked is what local handover is about. It changes no answer.
 */
final class CountingBackend<G extends Grant> extends ForwardingLeaseBackend<G> {

    final AtomicInteger tryAcquires = new AtomicInteger();
    final AtomicInteger grants = new AtomicInteger();
    private final Map<Thread, AtomicInteger> byThread = new ConcurrentHashMap<>();
    /** While set, releases wait for it to open: a release hanging on a dead connection. */
    volatile CountDownLatch releaseGate;

    private CountingBackend(LeaseBackend<G> store) {
        super(store);
    }

    static <G extends Grant> CountingBackend<G> over(LeaseBackend<G> store) {
        return new CountingBackend<>(store);
    }

    /** How many grant requests {@code thread} sent. */
    int tryAcquiresBy(Thread thread) {
        AtomicInteger count = byThread.get(thread);
        return count == null ? 0 : count.get();
    }

    @Override
    public Optional<G> tryAcquire(GrantRequest request) throws Exception {
        tryAcquires.incrementAndGet();
        byThread.computeIfAbsent(Thread.currentThread(), t -> new AtomicInteger()).incrementAndGet();
        Optional<G> grant = target().tryAcquire(request);
        grant.ifPresent(g -> grants.incrementAndGet());
        return grant;
    }

    @Override
    public void release(G grant) throws Exception {
        CountDownLatch gate = releaseGate;
        if (gate != null) {
            gate.await();
        }
        target().release(grant);
    }
}
