package dev.lease.aop;

import java.lang.reflect.Method;

/**
 * Which methods run on the reactive path: those returning Reactor publishers, told by class name so that Reactor
 * stays optional, and Kotlin suspend functions, which Spring's proxies call as a {@code Mono} ({@link SuspendFunctions}).
 */
final class ReactiveTypes {

    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";

    private ReactiveTypes() {
    }

    /** @return whether the method returns {@code Mono} or {@code Flux} (or a subclass), or is a suspend function */
    static boolean isReactive(Method method) {
        return isMono(method) || isFlux(method) || SuspendFunctions.is(method);
    }

    static boolean isMono(Method method) {
        return is(method.getReturnType(), MONO);
    }

    static boolean isFlux(Method method) {
        return is(method.getReturnType(), FLUX);
    }

    private static boolean is(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }
}
