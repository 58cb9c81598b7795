package dev.lease.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Clock;
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
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

import dev.lease.LeaseConfigurationException;
import dev.lease.Once;
import dev.lease.WhenBusy;
import dev.lease.spi.LeaseNames;

/**
 * The parsed {@link Once} metadata of every method, per target class, computed once and checked at startup: the key
 * template (as lease names are), {@code #{period}} only beside {@code @Scheduled}, and a return type whose work ends
 * when the method returns and that can say "skipped". Also evaluates keys, the only per-call work.
 */
final class OnceMethods {

    private static final OnceMethod NONE = new OnceMethod(null, null, null, null);

    private final Map<MethodClassKey, OnceMethod> cache = new ConcurrentHashMap<>();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final StringValueResolver placeholders;
    private final BeanResolver beanResolver;
    private final Clock clock;

    OnceMethods(StringValueResolver placeholders, BeanResolver beanResolver, Clock clock) {
        this.placeholders = placeholders;
        this.beanResolver = beanResolver;
        this.clock = clock;
    }

    Optional<OnceMethod> find(Method method, Class<?> targetClass) {
        OnceMethod found = cache.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
            Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
            Once once = AnnotatedElementUtils.findMergedAnnotation(specific, Once.class);
            if (once == null && specific != method) {
                once = AnnotatedElementUtils.findMergedAnnotation(method, Once.class);
            }
            if (once == null) {
                return NONE;
            }
            boolean async = AnnotatedElementUtils.hasAnnotation(specific, Async.class)
                    || AnnotatedElementUtils.hasAnnotation(targetClass, Async.class);
            return parse(specific, once, async);
        });
        return found == NONE ? Optional.empty() : Optional.of(found);
    }

    /** Parses every {@code @Once} method of a bean class now, so mistakes fail the startup. */
    List<OnceMethod> inspect(Class<?> beanClass) {
        Class<?> userClass = ClassUtils.getUserClass(beanClass);
        List<OnceMethod> found = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, m -> find(m, userClass).ifPresent(once -> {
            int modifiers = m.getModifiers();
            if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
                throw new LeaseConfigurationException(once.culprit() + " would never be recorded: the method is "
                        + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers) ? "final" : "static")
                        + ", so the Spring proxy cannot intercept it and it would run on every call.",
                        LeasedMethod.openHint(m) + "make the method public (or protected), non-final and non-static, "
                                + "and call it through the bean.");
            }
            found.add(once);
        }), m -> !m.isBridge() && !m.isSynthetic());
        return found;
    }

    Collection<OnceMethod> all() {
        return cache.values().stream().filter(m -> m != NONE).distinct().toList();
    }

    private OnceMethod parse(Method method, Once once, boolean async) {
        String where = OnceMethod.culprit(method, "'" + LeaseNames.printable(once.key()) + "'");
        NameTemplate key = NameTemplate.parse(where, "key", once.key(), NameTemplate::checkNotBlank,
                "nightly-report-2026-12", "nightly-report-#{period}").checkVariables(where, "key", method,
                        parameterNames);
        if (ReactiveTypes.isReactive(method)) {
            throw new LeaseConfigurationException(where + (SuspendFunctions.is(method) ? " is a Kotlin suspend "
                    + "function" : ": the method returns " + method.getReturnType().getSimpleName()) + ", whose work "
                    + "runs after the method returns, outside the transaction the key is recorded in, so the key "
                    + "would not commit with the work.", "make the method blocking (return the value itself), or "
                            + "record the key yourself in the work's reactive transaction.");
        }
        Class<?> returnType = method.getReturnType();
        if (AsyncResults.isAsynchronous(returnType) && !(async && AsyncResults.isFuture(returnType))) {
            throw new LeaseConfigurationException(where + ": the method returns " + returnType.getSimpleName()
                    + ", so its work would go on after the transaction that records the key has ended.",
                    "put @Once on the method that does the work synchronously, or make this method @Async: the key "
                            + "is then recorded on the executor thread, in the body's transaction.");
        }
        boolean readsPeriod = key.readsRootProperty("period");
        SchedulePeriod period = readsPeriod ? SchedulePeriod.of(method, placeholders, where) : null;
        if (readsPeriod && period == null) {
            throw new LeaseConfigurationException(where + ": the key reads #{period}, the tick of the method's "
                    + "@Scheduled trigger, but " + LeasedMethod.describe(method) + " has no @Scheduled.",
                    "add @Scheduled(cron = ..., fixedRate = ... or fixedDelay = ...) to the method, or build the key "
                            + "from its arguments instead (\"report-#{#day}\").");
        }
        return new OnceMethod(method, key, period,
                LeasedMethodParser.skipValue(where, returnType, WhenBusy.SKIP));
    }

    /** The key of one call. */
    String evaluateKey(OnceMethod once, Object[] args, Object target) {
        Method method = once.method();
        return once.key().evaluate("the @Once key of " + LeasedMethod.describe(method), () -> {
            MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(new OnceExpressionRoot(method,
                    args, target, () -> period(once)), method, args, parameterNames);
            if (beanResolver != null) {
                context.setBeanResolver(beanResolver);
            }
            return context;
        });
    }

    private String period(OnceMethod once) {
        if (once.period() == null) {
            throw new IllegalStateException(once.culprit() + " reads #{period} but has no @Scheduled trigger");
        }
        return once.period().at(clock.instant());
    }
}
