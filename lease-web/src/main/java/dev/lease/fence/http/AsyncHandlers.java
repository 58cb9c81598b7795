package dev.lease.fence.http;

import java.lang.reflect.Method;
import java.util.Set;
import java.util.concurrent.Future;

import org.springframework.core.KotlinDetector;
import org.springframework.core.ResolvableType;

import dev.lease.LeaseConfigurationException;
import dev.lease.aop.AsyncResults;

/**
 * Handler results whose work Spring MVC runs after the handler returned: {@code @Leased}'s asynchronous types
 * ({@link AsyncResults}: futures, completion stages, publishers, reactive types) plus the ones only Spring MVC knows.
 * A fenced handler returning one would pass the fence and commit its transaction before that work ran, so a stale
 * holder's write could land after a newer one the fence accepted meanwhile. Told by name: every web stack is optional.
 */
final class AsyncHandlers {

    private static final Set<String> MVC_ASYNC = Set.of("java.util.concurrent.Callable",
            "org.springframework.web.context.request.async.WebAsyncTask",
            "org.springframework.web.context.request.async.DeferredResult",
            "org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
            "org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody");

    /** {@code ResponseEntity} and {@code HttpEntity}, whose body Spring MVC treats as the handler's result. */
    private static final String HTTP_ENTITY = "org.springframework.http.HttpEntity";

    private static final ClassValue<Boolean> ASYNC = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return AsyncResults.isAsynchronous(type) || isOrExtends(type, MVC_ASYNC);
        }
    };

    private AsyncHandlers() {
    }

    /** At startup: refuses a handler declared to return asynchronous work (in a {@code ResponseEntity} or not). */
    static void refuseDeclared(FencedRequestMethods.Parsed parsed) {
        Method method = parsed.method();
        if (KotlinDetector.isSuspendingFunction(method)) {
            throw refusal(parsed, "is a Kotlin suspend function");
        }
        ResolvableType type = ResolvableType.forMethodReturnType(method);
        ResolvableType entity = entity(type);
        ResolvableType body = entity != null ? entity.getGeneric(0) : type;
        Class<?> resolved = body.resolve(Object.class);
        if (ASYNC.get(resolved)) {
            throw refusal(parsed, "returns " + (entity != null ? type.toString() : resolved.getName()));
        }
    }

    /**
     * At run time, inside the handler's transaction: a handler declared {@code Object} (or an interface) may still
     * return asynchronous work; refusing it rolls the fence and the transaction back before Spring MVC can start it.
     */
    static Object refuseReturned(FencedRequestMethods.Parsed parsed, Object returned) {
        Object body = returned;
        if (returned != null && isOrExtends(returned.getClass(), Set.of(HTTP_ENTITY))) {
            body = ((org.springframework.http.HttpEntity<?>) returned).getBody();
        }
        if (body == null || !ASYNC.get(body.getClass())) {
            return returned;
        }
        if (body instanceof Future<?> future) {
            future.cancel(true);
        }
        throw refusal(parsed, "returned a " + body.getClass().getName() + " although it is declared to return "
                + parsed.method().getReturnType().getSimpleName());
    }

    private static LeaseConfigurationException refusal(FencedRequestMethods.Parsed parsed, String what) {
        return new LeaseConfigurationException(parsed.describe() + " " + what + ": Spring MVC would run that work "
                + "after the handler returned, after the fence was checked and its transaction committed, so a stale "
                + "holder's write could land after a newer token's write that the fence accepted meanwhile.",
                "do the work in the handler and return its result (a synchronous handler); the fence's transaction "
                        + "then covers it. Asynchronous fenced handlers are refused.");
    }

    private static ResolvableType entity(ResolvableType type) {
        for (ResolvableType t = type; t != ResolvableType.NONE && t.resolve() != null; t = t.getSuperType()) {
            if (t.resolve().getName().equals(HTTP_ENTITY)) {
                return t;
            }
        }
        return null;
    }

    private static boolean isOrExtends(Class<?> type, Set<String> names) {
        if (type == null) {
            return false;
        }
        if (names.contains(type.getName())) {
            return true;
        }
        for (Class<?> i : type.getInterfaces()) {
            if (isOrExtends(i, names)) {
                return true;
            }
        }
        return isOrExtends(type.getSuperclass(), names);
    }
}
