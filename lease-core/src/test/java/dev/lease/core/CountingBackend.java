package dev.lease.core;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A real backend (the in-memory one) that counts the grant requests it is sent, in all and per calling thread: how
 * many times the store is asked is what local handover is about. It changes no answer.
 */
final class CountingBackend<G extends Grant> implements LeaseBackend<G> {

    private final LeaseBackend<G> store;
    final AtomicInteger tryAcquires = new AtomicInteger();
    final AtomicInteger grants = new AtomicInteger();
    private final Map<Thread, AtomicInteger> byThread = new ConcurrentHashMap<>();
    /** While set, releases wait for it to open: a release hanging on a dead connection. */
    volatile CountDownLatch releaseGate;

    private CountingBackend(LeaseBackend<G> store) {
        this.store = store;
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
    public String id() {
        return store.id();
    }

    @Override
    public boolean issuesFencingTokens() {
        return store.issuesFencingTokens();
    }

    @Override
    public Optional<G> tryAcquire(GrantRequest request) throws Exception {
        tryAcquires.incrementAndGet();
        byThread.computeIfAbsent(Thread.currentThread(), t -> new AtomicInteger()).incrementAndGet();
        Optional<G> grant = store.tryAcquire(request);
        grant.ifPresent(g -> grants.incrementAndGet());
        return grant;
    }

    @Override
    public boolean renew(G grant) throws Exception {
        return store.renew(grant);
    }

    @Override
    public void release(G grant) throws Exception {
        CountDownLatch gate = releaseGate;
        if (gate != null) {
            gate.await();
        }
        store.release(grant);
    }

    @Override
    public void abandon(GrantRequest request) throws Exception {
        store.abandon(request);
    }

    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        store.awaitRelease(name, maxWait);
    }

    @Override
    public boolean boundsCallsByDeadline() {
        return store.boundsCallsByDeadline();
    }
}
