package dev.lease.aop;

import java.time.Duration;

import io.netty.util.concurrent.FastThreadLocalThread;
import reactor.core.scheduler.Schedulers;

import org.springframework.util.ClassUtils;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;

/**
 * Threads that must never block: those Reactor marks non-blocking (its parallel and single schedulers, Reactor Netty's
 * event loops) and Netty's own threads, which Netty declares non-blocking unless they permit blocking calls (as its
 * BlockHound integration does). A blocking {@code @Leased} call asks the lease store and may wait for a busy lease;
 * on such a thread it would stall everything the thread serves (every connection of an event loop), so it is refused.
 * Reactor and Netty stay optional: each is asked only when present.
 */
final class NonBlockingThreads {

    private static final ClassLoader LOADER = NonBlockingThreads.class.getClassLoader();
    private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.scheduler.Schedulers", LOADER);
    private static final boolean NETTY = ClassUtils.isPresent("io.netty.util.concurrent.FastThreadLocalThread", LOADER);

    private NonBlockingThreads() {
    }

    /** Whether the calling thread must not block. */
    static boolean current() {
        return (REACTOR && Reactor.nonBlocking()) || (NETTY && Netty.nonBlocking(Thread.currentThread()));
    }

    /**
     * Refuses a blocking leased call on a thread that must not block.
     *
     * @param culprit the annotation, method and lease, for the message
     * @param waitFor how long the call would wait for a busy lease
     * @throws LeaseConfigurationException when the calling thread must not block
     */
    static void refuseBlocking(String culprit, Duration waitFor) {
        if (!current()) {
            return;
        }
        throw new LeaseConfigurationException(culprit + " was called on '" + Thread.currentThread().getName() + "', "
                + "a thread that must not block (an event loop, or a Reactor non-blocking scheduler): taking the lease "
                + "blocks on the lease store" + (waitFor.isZero() ? "" : ", and on a busy lease for up to waitFor = "
                        + Durations.format(waitFor)) + ", which would stall everything this thread serves, so the "
                + "call is refused.", "declare the method to return Mono or Flux, or make it a Kotlin suspend "
                        + "function: the lease is then taken without blocking any thread; or use ReactiveLeaseTemplate; "
                        + "or call the method off the event loop (publishOn(Schedulers.boundedElastic())).");
    }

    /** Loaded only when Reactor is present. */
    private static final class Reactor {

        static boolean nonBlocking() {
            return Schedulers.isInNonBlockingThread();
        }
    }

    /** Loaded only when Netty is present. */
    private static final class Netty {

        static boolean nonBlocking(Thread thread) {
            return thread instanceof FastThreadLocalThread netty && !netty.permitBlockingCalls();
        }
    }
}
