package dev.lease.fence.http;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.aop.MethodNameTemplate;
import dev.lease.fence.JdbcFence;
import dev.lease.spi.LeaseNames;

/** The parsed {@link FencedRequest} of every method, per target class, computed once (at startup for beans). */
final class FencedRequestMethods {

    /**
     * One annotated method.
     *
     * @param lease the expected lease name, or null when any is accepted
     */
    record Parsed(Method method, MethodNameTemplate resource, MethodNameTemplate lease) {

        String describe() {
            return "@FencedRequest on " + MethodNameTemplate.describe(method);
        }
    }

    private static final Parsed NONE = new Parsed(null, null, null);

    private final Map<MethodClassKey, Parsed> cache = new ConcurrentHashMap<>();
    private final boolean refuseAsynchronous;

    FencedRequestMethods() {
        this(true);
    }

    /** @param refuseAsynchronous false only for the fault suite's mutant, which must show what the refusal prevents */
    FencedRequestMethods(boolean refuseAsynchronous) {
        this.refuseAsynchronous = refuseAsynchronous;
    }

    /** What the handler returned, unless it is asynchronous work that would escape the fence's transaction. */
    Object checkReturned(Parsed parsed, Object returned) {
        return refuseAsynchronous ? AsyncHandlers.refuseReturned(parsed, returned) : returned;
    }

    Optional<Parsed> find(Method method, Class<?> targetClass) {
        Parsed found = cache.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
            Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
            FencedRequest fenced = AnnotatedElementUtils.findMergedAnnotation(specific, FencedRequest.class);
            if (fenced == null && specific != method) {
                fenced = AnnotatedElementUtils.findMergedAnnotation(method, FencedRequest.class);
            }
            return fenced == null ? NONE : parse(specific, fenced);
        });
        return found == NONE ? Optional.empty() : Optional.of(found);
    }

    /** Parses every fenced method of a bean class now, so that mistakes fail the startup. */
    List<Parsed> inspect(Class<?> beanClass) {
        Class<?> userClass = ClassUtils.getUserClass(beanClass);
        List<Parsed> found = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, m -> find(m, userClass).ifPresent(parsed -> {
            int modifiers = m.getModifiers();
            if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
                throw new LeaseConfigurationException(parsed.describe() + " would never be checked: the method is "
                        + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers) ? "final" : "static")
                        + ", so the Spring proxy cannot intercept it and every request would run unfenced.",
                        "make the handler method public (or protected), non-final and non-static.");
            }
            if (refuseAsynchronous) {
                AsyncHandlers.refuseDeclared(parsed);
            }
            found.add(parsed);
        }), m -> !m.isBridge() && !m.isSynthetic());
        return found;
    }

    private static Parsed parse(Method method, FencedRequest fenced) {
        String where = "@FencedRequest on " + MethodNameTemplate.describe(method);
        MethodNameTemplate resource = MethodNameTemplate.parse(method, where, "resource", fenced.resource(),
                FencedRequestMethods::checkResource, "payment-42", "payment-#{#invoice}");
        MethodNameTemplate lease = fenced.lease().isEmpty() ? null
                : MethodNameTemplate.parse(method, where, "lease", fenced.lease(), LeaseNames::validate, "invoice-42",
                        "invoice-#{#invoice}");
        return new Parsed(method, resource, lease);
    }

    static String checkResource(String resource) {
        if (resource.isBlank()) {
            throw new IllegalArgumentException("it is blank");
        }
        if (resource.length() > JdbcFence.MAX_RESOURCE_LENGTH) {
            throw new IllegalArgumentException("it is " + resource.length() + " characters long, at most "
                    + JdbcFence.MAX_RESOURCE_LENGTH + " are allowed");
        }
        return resource;
    }
}
