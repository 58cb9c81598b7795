package dev.lease.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What closing the engine does to the leases still held: every one is declared lost first, all together, so that no
 * holder goes on working with a lease nobody renews while another's release is out; then they are released in
 * parallel, each on a thread of its own, and closing waits for them until the grace period ends. A release still out
 * then goes on in the background (a daemon thread, owner-checked at the store) and the grant otherwise expires there
 * on its own: a store that answers only at its client timeout cannot hold shutdown for that long, once per lease. A
 * lease kept after its work by holdAtLeast is not declared lost (its work is over), only released with the others.
 */
final class EngineShutdown {

    private static final Log log = LogFactory.getLog(EngineShutdown.class);

    /** How the threads that release at shutdown are named, followed by a number. */
    private static final String RELEASE_THREAD_PREFIX = "lease-shutdown-release-";

    private static final String REASON = "the lease engine was closed (application shutting down)";

    /** At most this many releases are sent at once; the rest queue behind them, within the same grace period. */
    private static final int MAX_PARALLEL_RELEASES = 32;

    private EngineShutdown() {
    }

    /**
     * Declares every lease lost, then releases them all and waits for the releases until {@code deadline} (on
     * {@link System#nanoTime()}).
     */
    static void loseAndRelease(List<HeldLease> held, long deadline) {
        if (held.isEmpty()) {
            return;
        }
        // Every lease invalid before any holder is interrupted: one reacting to its loss sees no other still valid.
        List<Runnable> losses = new ArrayList<>(held.size());
        for (HeldLease lease : held) {
            Runnable loss = lease.invalidate(LossCause.SHUTDOWN, REASON);
            if (loss != null) {
                losses.add(loss);
            }
        }
        losses.forEach(Runnable::run);
        CountDownLatch released = new CountDownLatch(held.size());
        Set<HeldLease> done = ConcurrentHashMap.newKeySet();
        AtomicInteger next = new AtomicInteger();
        int threads = Math.min(held.size(), MAX_PARALLEL_RELEASES);
        for (int i = 0; i < threads; i++) {
            Thread releaser = new Thread(() -> {
                for (int n = next.getAndIncrement(); n < held.size(); n = next.getAndIncrement()) {
                    try {
                        held.get(n).close(false);
                    }
                    catch (RuntimeException ex) {
                        // The release itself never throws (the lease logs its failure); a hook that does must not
                        // keep the other leases of this thread from being released.
                        log.warn("Closing the lease engine: releasing " + held.get(n).nameAndToken() + " failed", ex);
                    }
                    finally {
                        done.add(held.get(n));
                        released.countDown();
                    }
                }
            }, RELEASE_THREAD_PREFIX + (i + 1));
            releaser.setDaemon(true);
            releaser.start();
        }
        try {
            if (released.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                return;
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        String late = held.stream().filter(lease -> !done.contains(lease)).map(HeldLease::nameAndToken)
                .collect(Collectors.joining(", "));
        log.warn("Closing the lease engine: the release of " + late + " did not return within the "
                + "shutdown grace period; each goes on in the background, and the store lets the grant expire at "
                + "the end of its ttl otherwise");
    }
}
