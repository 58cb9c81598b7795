package dev.lease.reactive;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.core.scheduler.Schedulers;

import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A blocking-call detector at the backend: every grant request and release (the calls that block on a store) records
 * the thread it ran on when that thread is one Reactor marks non-blocking (parallel schedulers, event loops) or a
 * Netty event loop. A section that asked the store on its subscriber's event loop shows up here.
 */
final class NonBlockingCheck<G extends Grant> extends ForwardingLeaseBackend<G> {

    private final List<String> violations = new CopyOnWriteArrayList<>();

    NonBlockingCheck(LeaseBackend<G> target) {
        super(target);
    }

    @Override
    public Optional<G> tryAcquire(GrantRequest request) throws Exception {
        check("tryAcquire(" + request.name() + ")");
        return super.tryAcquire(request);
    }

    @Override
    public void release(G grant) throws Exception {
        check("release");
        super.release(grant);
    }

    /** The blocking calls made on non-blocking threads so far. */
    List<String> violations() {
        return List.copyOf(violations);
    }

    static boolean onEventLoop() {
        String name = Thread.currentThread().getName();
        return Schedulers.isInNonBlockingThread() || name.startsWith("reactor-http-") || name.contains("nioEventLoop")
                || name.contains("epollEventLoop");
    }

    private void check(String call) {
        if (onEventLoop()) {
            violations.add(call + " on " + Thread.currentThread().getName());
        }
    }
}
