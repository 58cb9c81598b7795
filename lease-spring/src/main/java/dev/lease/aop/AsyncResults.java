package dev.lease.aop;

import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import org.springframework.core.ReactiveAdapterRegistry;

import dev.lease.LeaseConfigurationException;

/**
 * Asynchronous types (futures, publishers, Kotlin flows and jobs, and every type Spring's
 * {@link ReactiveAdapterRegistry} adapts), which a lease around a method body cannot cover: the work they stand for
 * runs after the body returned, when the lease is released. Told by name where the library is optional. Public for
 * the other annotations built on the library that must refuse the same types (lease-web's {@code @FencedRequest}),
 * so that there is one list; not part of the contract.
 */
public final class AsyncResults {

    private static final Set<String> ASYNC_INTERFACES = Set.of("org.reactivestreams.Publisher",
            "kotlinx.coroutines.flow.Flow", "kotlinx.coroutines.Job");

    private static final ClassValue<Boolean> ASYNC = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return isFuture(type) || java.util.concurrent.Flow.Publisher.class.isAssignableFrom(type)
                    || isOrImplements(type) || ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
        }
    };

    private AsyncResults() {
    }

    /**
     * Whether values of {@code type} stand for work that goes on after they are returned.
     *
     * @param type a declared or returned type
     * @return true for futures, completion stages, publishers, Kotlin flows and jobs, and reactive types
     */
    public static boolean isAsynchronous(Class<?> type) {
        return ASYNC.get(type);
    }

    static boolean isFuture(Class<?> type) {
        return Future.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type);
    }

    /**
     * Fails a call whose body returned asynchronous work, which would run after the lease (or the term) was released:
     * the startup check sees only the declared type, and a method declared {@code Object} or an interface may return
     * anything. Behind an {@code @Async} hand-off the lease is held on the executor thread, so a future that is already
     * complete there is the method's result, not work escaping the lease.
     *
     * @param culprit the annotation, method and lease, for the message
     * @param declared the method's declared return type
     * @param returned what the body returned
     * @param async whether the method runs behind an {@code @Async} hand-off
     * @return {@code returned}, when it does not escape
     * @throws LeaseConfigurationException when it does; a future is cancelled first, a publisher is never subscribed to
     */
    static Object refuseEscaping(Supplier<String> culprit, Class<?> declared, Object returned, boolean async) {
        if (returned == null || !isAsynchronous(returned.getClass())) {
            return returned;
        }
        boolean future = returned instanceof Future<?>;
        if (async && future && ((Future<?>) returned).isDone()) {
            return returned;
        }
        String fate;
        if (future) {
            ((Future<?>) returned).cancel(true);
            fate = "It was cancelled, but whatever it had done by then ran outside the lease and is not undone.";
        }
        else {
            fate = "It was dropped without being subscribed to or awaited: if it does its work only then, none of it "
                    + "ran; work it had started before it was returned is not stopped.";
        }
        boolean handedOff = async && future;
        String fix = handedOff
                ? "complete the work inside the method (the lease is held on the executor thread), and return "
                        + "CompletableFuture.completedFuture(result)."
                : "declare the method to return Mono or Flux (or make it a Kotlin suspend function), whose work is "
                        + "held under the lease until it ends; or do the work in the method and return its result.";
        throw new LeaseConfigurationException(culprit.get() + " returned " + describe(returned.getClass())
                + (handedOff ? " that had not completed" : " although it is declared to return "
                        + declared.getSimpleName()) + ": that asynchronous work would run after the lease was "
                + "released, so the call fails instead. " + fate, fix);
    }

    /** {@code a Mono (reactor.core.publisher.MonoJust)}: the kind a reader knows, then the class. */
    private static String describe(Class<?> type) {
        var adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
        String kind = adapter != null ? adapter.getReactiveType().getSimpleName()
                : Future.class.isAssignableFrom(type) ? "Future" : null;
        return kind == null || kind.equals(type.getSimpleName()) ? "a " + type.getName()
                : "a " + kind + " (" + type.getName() + ")";
    }

    private static boolean isOrImplements(Class<?> type) {
        if (ASYNC_INTERFACES.contains(type.getName())) {
            return true;
        }
        for (Class<?> i : type.getInterfaces()) {
            if (isOrImplements(i)) {
                return true;
            }
        }
        return type.getSuperclass() != null && isOrImplements(type.getSuperclass());
    }
}
