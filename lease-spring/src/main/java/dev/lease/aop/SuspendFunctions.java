package dev.lease.aop;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;

import org.springframework.core.KotlinDetector;
import org.springframework.core.Nullness;
import org.springframework.util.ClassUtils;

import dev.lease.LeaseConfigurationException;

/**
 * Kotlin {@code suspend} functions under {@code @Leased} and {@code @LeaderOnly}. A Spring proxy calls such a function
 * as a {@code Mono} (Spring's {@code CoroutinesUtils}, through kotlinx-coroutines-reactor and kotlin-reflect), which the
 * caller's coroutine awaits without blocking its thread. So they run on the reactive path: the lease is taken when the
 * proxy subscribes, the coroutine runs with the lease in its Reactor context, and a loss cancels the subscription,
 * which cancels the coroutine. Told by Spring's {@link KotlinDetector}, so that Kotlin stays optional.
 */
final class SuspendFunctions {

    /** What Spring's proxies need to call a suspend function as a {@code Mono}, besides kotlin-reflect. */
    private static final String MONO_ADAPTER = "kotlinx.coroutines.reactor.MonoKt";

    private SuspendFunctions() {
    }

    static boolean is(Method method) {
        return KotlinDetector.isSuspendingFunction(method);
    }

    /**
     * Refuses at startup a suspend function that would escape its lease or break its caller.
     *
     * @param where the annotation and method, for messages
     * @param skipped whether a call can be skipped (and then return null)
     */
    static void check(String where, Method method, boolean skipped) {
        check(where, method, skipped, KotlinDetector.isKotlinReflectPresent()
                && ClassUtils.isPresent(MONO_ADAPTER, SuspendFunctions.class.getClassLoader()));
    }

    /** @param adaptable whether Spring can call suspend functions as a {@code Mono} here */
    static void check(String where, Method method, boolean skipped, boolean adaptable) {
        if (!is(method)) {
            return;
        }
        if (!adaptable) {
            throw new LeaseConfigurationException(where + " is a Kotlin suspend function, and Spring calls those as a "
                    + "Mono (which is held under the lease until it ends and cancelled when the lease is lost) only with "
                    + "kotlinx-coroutines-reactor and kotlin-reflect on the classpath; without them the lease would be "
                    + "released at the function's first suspension point.",
                    "add org.jetbrains.kotlinx:kotlinx-coroutines-reactor and org.jetbrains.kotlin:kotlin-reflect.");
        }
        if (skipped && !returnsUnit(method) && Nullness.forMethodReturnType(method) == Nullness.NON_NULL) {
            throw new LeaseConfigurationException(where + " returns a non-null type, but a skipped call (busy lease "
                    + "with whenBusy = SKIP, or @LeaderOnly off the leader) returns null, which its caller would not "
                    + "expect.", "declare the return type nullable (for example Long?), return Unit, or use "
                            + "whenBusy = THROW.");
        }
    }

    /** A {@code suspend fun} that returns {@code Unit} compiles to a method whose continuation is of {@code Unit}. */
    private static boolean returnsUnit(Method method) {
        Type[] parameters = method.getGenericParameterTypes();
        if (parameters[parameters.length - 1] instanceof ParameterizedType continuation
                && continuation.getActualTypeArguments()[0] instanceof WildcardType result) {
            Type[] lower = result.getLowerBounds();
            return lower.length == 1 && lower[0].getTypeName().equals("kotlin.Unit");
        }
        return false;
    }
}
