package dev.lease.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

import dev.lease.LeaseConfigurationException;
import dev.lease.WhenBusy;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeaderOnly;
import dev.lease.spi.LeaseNames;

/**
 * Advises {@link LeaderOnly} methods: on the leader of their election they run in its current term (bound to the
 * thread, interrupted when the term ends), elsewhere they return at once as {@code whenBusy = SKIP} would. Each
 * method is checked when its bean is created (election name, return type) and declares its election to the
 * {@link SpringLeaderElections} bean, which checks routing, timing and conflicting kinds once all singletons exist.
 */
public class LeaderOnlyAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    private final ObjectProvider<SpringLeaderElections> elections;
    private final Map<Method, Supplier<Object>> skipValues = new ConcurrentHashMap<>();
    /** Created at the first Mono/Flux call, so that Reactor stays optional. */
    private Supplier<ReactiveLeasedCalls> reactive;

    /**
     * @param elections the elections bean, looked up lazily so that this post-processor does not create it early
     */
    public LeaderOnlyAnnotationBeanPostProcessor(ObjectProvider<SpringLeaderElections> elections) {
        this.elections = elections;
        setBeforeExistingAdvisors(true);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.reactive = SingletonSupplier.of(() -> ReactiveLeasedCalls.of(beanFactory,
                () -> beanFactory.getBeanProvider(LeaseEngine.class).getIfUnique()));
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, LeaderOnly.class, true),
                new LeaderOnlyInterceptor());
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(AopUtils.getTargetClass(bean))) {
            // Not synthetic: Kotlin copies the annotations of an open suspend fun onto a static $suspendImpl twin.
            ReflectionUtils.doWithMethods(AopUtils.getTargetClass(bean), this::inspect, method -> !method.isBridge()
                    && !method.isSynthetic() && AnnotatedElementUtils.hasAnnotation(method, LeaderOnly.class));
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    private void inspect(Method method) {
        LeaderOnly leaderOnly = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
        String where = "@LeaderOnly on " + LeasedMethod.describe(method) + " (election '"
                + LeaseNames.printable(leaderOnly.election()) + "')";
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
            throw new LeaseConfigurationException(where + " would never be intercepted: the method is "
                    + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers) ? "final" : "static")
                    + ", so it would run on every instance, leader or not.",
                    LeasedMethod.openHint(method) + "make the method public (or protected), non-final and non-static, and call it through the bean.");
        }
        if (AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class)) {
            throw new LeaseConfigurationException(where + " is also @Async: the term would be bound to the calling "
                    + "thread, not to the executor thread that runs the body, so the body would run outside the term.",
                    "call the @LeaderOnly method from the @Async one (on another bean), or drop @Async.");
        }
        SuspendFunctions.check(where, method, true);
        skipValues.computeIfAbsent(method,
                m -> LeasedMethodParser.skipValue(where, m.getReturnType(), WhenBusy.SKIP));
        // The elections bean adds the election's name to what it reports, so the declaration names the method alone.
        elections.getObject().declare(new SpringLeaderElections.Declaration(leaderOnly.election(), leaderOnly.kind(),
                null, null, "@LeaderOnly on " + LeasedMethod.describe(method)));
    }

    @Override
    public void afterSingletonsInstantiated() {
        SpringLeaderElections found = elections.getIfAvailable();
        if (found != null) {
            found.createElections();
        }
    }

    private final class LeaderOnlyInterceptor implements MethodInterceptor {

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            Class<?> target = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis()) : null;
            Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), target);
            LeaderOnly leaderOnly = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
            if (leaderOnly == null) {
                return invocation.proceed();
            }
            if (ReactiveTypes.isReactive(method)) {
                // On subscription, in the term current then; empty at once when this instance does not lead.
                return reactive.get().asLeader(invocation, method,
                        elections.getObject().election(leaderOnly.election()));
            }
            Supplier<Object> skip = skipValues.getOrDefault(method, () -> null);
            return elections.getObject().election(leaderOnly.election()).runAsLeader(lease -> AsyncResults
                    .refuseEscaping(() -> "@LeaderOnly on " + LeasedMethod.describe(method) + " (election '"
                            + leaderOnly.election() + "')", method.getReturnType(), invocation.proceed(), false), skip);
        }
    }
}
