package dev.lease.reactive;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.DetachedSection;
import dev.lease.core.LeaseEngine;

/**
 * Asks the engine for grants off the subscriber's thread, and waits between attempts on a timer rather than on a
 * thread. The engine's calls block (backend clients are blocking), so each request runs on a scheduler meant for
 * blocking work, never on the event loop that subscribed; a busy lease is asked again after a growing pause
 * ({@link Mono#delay}), so a waiting subscriber holds no thread.
 */
final class GrantRequests {

    private static final Log log = LogFactory.getLog(GrantRequests.class);

    private static final long FIRST_PAUSE_NANOS = Duration.ofMillis(20).toNanos();
    private static final long LONGEST_PAUSE_NANOS = Duration.ofMillis(500).toNanos();
    private static final Object CANCELLED = new Object();

    private final LeaseEngine engine;
    private final Scheduler blocking;

    GrantRequests(LeaseEngine engine, Scheduler blocking) {
        this.engine = engine;
        this.blocking = blocking;
    }

    /**
     * Grants the lease, waiting up to the spec's waitFor.
     *
     * @return the section, or empty when the lease is still held by someone else when the wait is over
     */
    Mono<DetachedSection> acquire(LeaseSpec spec) {
        return Mono.defer(() -> attempt(spec, System.nanoTime() + spec.waitFor().toNanos(), FIRST_PAUSE_NANOS));
    }

    private Mono<DetachedSection> attempt(LeaseSpec spec, long deadline, long pauseNanos) {
        return request(spec).flatMap(granted -> granted.map(Mono::just).orElseGet(() -> {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Mono.empty();
            }
            // Jitter, so that waiters of several instances do not ask in step.
            long pause = Math.min(left, pauseNanos / 2 + ThreadLocalRandom.current().nextLong(pauseNanos / 2 + 1));
            return Mono.delay(Duration.ofNanos(pause))
                    .then(Mono.defer(() -> attempt(spec, deadline, Math.min(2 * pauseNanos, LONGEST_PAUSE_NANOS))));
        }));
    }

    /**
     * One grant request on the blocking scheduler. A subscriber that cancels while the request is out never gets the
     * grant, and the grant is released at once: a lease nobody holds would otherwise be renewed for ever. The request
     * itself is not interrupted (the engine settles a call it abandons, but a grant it made must be released here).
     */
    private Mono<Optional<DetachedSection>> request(LeaseSpec spec) {
        return Mono.create(sink -> {
            AtomicReference<Object> outcome = new AtomicReference<>();
            sink.onCancel(() -> {
                Object granted = outcome.getAndSet(CANCELLED);
                if (granted instanceof DetachedSection section) {
                    blocking.schedule(section::close);
                }
            });
            blocking.schedule(() -> {
                Optional<DetachedSection> granted;
                try {
                    granted = DetachedSection.tryAcquire(engine, spec);
                }
                catch (Throwable ex) {
                    sink.error(ex);
                    return;
                }
                if (granted.isPresent() && !outcome.compareAndSet(null, granted.get())) {
                    granted.get().close();
                    return;
                }
                sink.success(granted);
            });
        });
    }

    LeaseUnavailableException busy(LeaseSpec spec) {
        return DetachedSection.busy(engine, spec);
    }

    /** Releases the section on the blocking scheduler (the release is a store call unless the lease was lost). */
    Mono<Void> release(DetachedSection section) {
        return Mono.<Void>fromRunnable(section::close).subscribeOn(blocking);
    }

    /**
     * Releases the section its subscriber cancelled. The cancel was passed on to the work, but nothing tells when work
     * already running has stopped (blocking code on a worker thread that ignores the interrupt, a coroutine that does
     * not suspend): a lease released now could be granted to another instance while that work still writes. So once
     * the work was subscribed to, the lease is kept for what is left of its validity, after which it would count as
     * lost anyway, and released then; a section cancelled before its work was subscribed to is released at once.
     */
    Mono<Void> releaseAfterCancel(ReactiveSection section) {
        if (!section.isWorkSubscribed()) {
            return release(section.detached());
        }
        Duration left = section.lease().remaining();
        if (log.isDebugEnabled()) {
            log.debug("Section of " + section.lease() + " cancelled by its subscriber while its work may still run: "
                    + "the lease is kept for the rest of its validity (" + left.toMillis() + " ms), then released");
        }
        return Mono.delay(left).then(release(section.detached()));
    }

    /** Fence at grant named by a nested section, through the engine's fence, on the blocking scheduler. */
    Mono<Void> fenceOnReentry(DetachedSection section, String resource) {
        return Mono.<Void>fromRunnable(() -> section.fenceOnReentry(resource)).subscribeOn(blocking);
    }

    /** Gives the section up after the fence at grant refused it, on the blocking scheduler. */
    Mono<Void> giveUp(DetachedSection section, String resource, Throwable refusal) {
        return Mono.<Void>defer(() -> Mono.error(section.fenceRefused(resource, refusal))).subscribeOn(blocking);
    }
}
