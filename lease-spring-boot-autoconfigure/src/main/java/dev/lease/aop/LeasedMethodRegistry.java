package dev.lease.aop;

import java.lang.reflect.Method;
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
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

import dev.lease.Leased;

/**
 * The parsed {@link Leased} metadata of every method, per target class, computed once. Also evaluates lease name
 * templates, which is the only per-call work.
 */
final class LeasedMethodRegistry {

    private static final LeasedMethod NONE = new LeasedMethod(null, null, null, null, null, null, null, null, null);

    private final Map<MethodClassKey, LeasedMethod> cache = new ConcurrentHashMap<>();
    private final LeasedMethodParser parser;
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final BeanResolver beanResolver;

    LeasedMethodRegistry(StringValueResolver placeholders, BeanResolver beanResolver) {
        this.parser = new LeasedMethodParser(placeholders);
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
            return leased == null ? NONE : parser.parse(specific, leased);
        });
        return found == NONE ? Optional.empty() : Optional.of(found);
    }

    /** Parses every leased method of a bean class now, so mistakes fail the startup. */
    List<LeasedMethod> inspect(Class<?> beanClass) {
        Class<?> userClass = ClassUtils.getUserClass(beanClass);
        List<LeasedMethod> found = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, m -> find(m, userClass).ifPresent(found::add),
                m -> !m.isBridge() && !m.isSynthetic());
        return found;
    }

    /** Every leased method parsed so far. */
    Collection<LeasedMethod> all() {
        return cache.values().stream().filter(m -> m != NONE).distinct().toList();
    }

    String evaluateName(LeasedMethod leased, Method method, Object[] args, Object target) {
        if (leased.literalName() != null) {
            return leased.literalName();
        }
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new LeasedExpressionRoot(method, args, target), method, args, parameterNames);
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        Object value = leased.nameTemplate().getValue(context);
        if (value == null) {
            throw new IllegalArgumentException("The lease name of " + leased.describe() + " evaluated to null");
        }
        return value.toString();
    }
}
