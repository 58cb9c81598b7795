package dev.lease.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

import dev.lease.Leased;
import dev.lease.LeaseConfigurationException;

/**
 * The parsed {@link Leased} metadata of every method, per target class, computed once. Also evaluates lease name
 * templates, which is the only per-call work.
 */
final class LeasedMethodRegistry {

    private static final LeasedMethod NONE = new LeasedMethod(null, null, null, null, null, null, null, null, false, null,
            null);

    private final Map<MethodClassKey, LeasedMethod> cache = new ConcurrentHashMap<>();
    private final LeasedMethodParser parser;
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final BeanResolver beanResolver;

    LeasedMethodRegistry(StringValueResolver placeholders, BeanResolver beanResolver) {
        this.parser = new LeasedMethodParser(placeholders, parameterNames);
        this.beanResolver = beanResolver;
    }

    /** The metadata of {@code method} as called on {@code targetClass}, if it is leased. */
    Optional<LeasedMethod> find(Method method, Class<?> targetClass) {
        LeasedMethod found = cache.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
            Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
            Leased leased = AnnotatedElementUtils.findMergedAnnotation(specific, Leased.class);
            if (leased == null && specific != method) {
                leased = AnnotatedElementUtils.findMergedAnnotation(method, Leased.class);
            }
            if (leased == null) {
                return NONE;
            }
            boolean async = AnnotatedElementUtils.hasAnnotation(specific, Async.class)
                    || AnnotatedElementUtils.hasAnnotation(method, Async.class)
                    || AnnotatedElementUtils.hasAnnotation(targetClass, Async.class);
            return parser.parse(specific, leased, async);
        });
        return found == NONE ? Optional.empty() : Optional.of(found);
    }

    /** Parses every leased method of a bean class now, so mistakes fail the startup. */
    List<LeasedMethod> inspect(Class<?> beanClass) {
        Class<?> userClass = ClassUtils.getUserClass(beanClass);
        List<LeasedMethod> found = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, m -> find(m, userClass).ifPresent(leased -> {
            int modifiers = m.getModifiers();
            if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
                throw new LeaseConfigurationException(leased.culprit() + " would never run: the method is "
                        + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers) ? "final" : "static")
                        + ", so the Spring proxy cannot intercept it and the method would run without any lease.",
                        LeasedMethod.openHint(m) + "make the method public (or protected), non-final and non-static, and call it through the bean.");
            }
            found.add(leased);
        }), m -> !m.isBridge() && !m.isSynthetic());
        return found;
    }

    /** Every leased method parsed so far. */
    Collection<LeasedMethod> all() {
        return cache.values().stream().filter(m -> m != NONE).distinct().toList();
    }

    /** The lease name for one call. */
    String evaluateName(LeasedMethod leased, Object[] args, Object target) {
        return leased.name().evaluate("the lease name of " + leased.describe(), () -> context(leased, args, target));
    }

    /** The resource to fence at grant for one call, or null when the method names none. */
    String evaluateFence(LeasedMethod leased, Object[] args, Object target) {
        return leased.fence() == null ? null
                : leased.fence().evaluate("the fence of " + leased.describe(), () -> context(leased, args, target));
    }

    private EvaluationContext context(LeasedMethod leased, Object[] args, Object target) {
        Method method = leased.method();
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new LeasedExpressionRoot(method, args, target), method, args, parameterNames);
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        return context;
    }
}
