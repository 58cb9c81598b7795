package dev.lease.aop;

import java.lang.reflect.Method;

/** Which methods return Reactor publishers, told by class name so that Reactor stays optional. */
final class ReactiveTypes {

    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";

    private ReactiveTypes() {
    }

    /** @return whether the method returns {@code Mono} or {@code Flux} (or a subclass) */
    static boolean isReactive(Method method) {
        return isMono(method) || is(method.getReturnType(), FLUX);
    }

    static boolean isMono(Method method) {
        return is(method.getReturnType(), MONO);
    }

    /** A Kotlin {@code suspend fun} compiles to a method whose last parameter is a continuation. */
    static boolean isSuspending(Method method) {
        Class<?>[] types = method.getParameterTypes();
        return types.length > 0 && types[types.length - 1].getName().equals("kotlin.coroutines.Continuation");
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
