package dev.lease.aop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.interceptor.AsyncExecutionInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.scheduling.config.TaskManagementConfigUtils;
import org.springframework.util.function.SingletonSupplier;

import dev.lease.Leased;
import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseTemplate;
import dev.lease.core.LeaseEngine;

/**
 * Adds the lease advisor to every bean with a {@link Leased} method, checks each such method when its bean is
 * created, and checks their routing, timing and names (against the rules of the backend each is routed to) once all
 * singletons exist, so that a mistake fails the startup rather than the first call.
 *
 * <p>The advisor goes in front of any advisor the bean already has, so a lease wraps {@code @Transactional}: the
 * transaction commits while the lease is still held and its validity is checked after the commit. It goes behind
 * an {@code @Async} hand-off, whichever of the two post-processors runs first, so the lease is taken on the thread
 * that runs the body; a configuration that would put the hand-off inside the lease fails the startup.
 *
 * <p>Calls go through the application's {@link LeaseTemplate} bean ({@link LeaseTemplate#run}): the
 * {@link LeaseEngine}, or a template of the application's own. Routing and timing are checked against the engine,
 * when there is one. Every advised bean is made to depend on the template, so Spring destroys it (cancelling its
 * {@code @Scheduled} tasks) before the template. When the template's destruction begins, leased calls that would
 * start are refused, and those in progress get up to 30 seconds to end before the engine closes and interrupts what
 * is left.
 */
public class LeasedAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton, DestructionAwareBeanPostProcessor {

    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(30);

    private static final Log log = LogFactory.getLog(LeasedAnnotationBeanPostProcessor.class);

    private final ObjectProvider<LeaseTemplate> leases;
    private final LeasedCalls calls = new LeasedCalls();
    private final Map<String, List<LeasedMethod>> asyncBeans = new ConcurrentHashMap<>();
    private ConfigurableListableBeanFactory beanFactory;
    private LeasedMethodRegistry registry;
    private Supplier<ReactiveLeasedCalls> reactive;

    /**
     * @param leases the template {@code @Leased} calls go through (the {@link LeaseEngine} unless the application
     *        has its own), looked up lazily so that this post-processor does not create it early
     */
    public LeasedAnnotationBeanPostProcessor(ObjectProvider<LeaseTemplate> leases) {
        this.leases = leases;
        setBeforeExistingAdvisors(true);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beanFactory = beanFactory instanceof ConfigurableListableBeanFactory clbf ? clbf : null;
        this.registry = new LeasedMethodRegistry(
                beanFactory instanceof ConfigurableBeanFactory cbf ? new EmbeddedValueResolver(cbf) : value -> value,
                new BeanFactoryResolver(beanFactory));
        this.reactive = SingletonSupplier.of(() -> ReactiveLeasedCalls.of(beanFactory, this::engine));
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Leased.class, true),
                new LeaseInterceptor(registry, leases, calls, reactive));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        // An existing JDK proxy's own class carries no annotations: judge by its target, as the superclass does.
        if (!(bean instanceof Advised ? isEligible(AopUtils.getTargetClass(bean)) : isEligible(bean, beanName))) {
            return super.postProcessAfterInitialization(bean, beanName);
        }
        List<LeasedMethod> async = registry.inspect(AopUtils.getTargetClass(bean)).stream()
                .filter(LeasedMethod::async).toList();
        if (!async.isEmpty()) {
            if (beanFactory != null && beanFactory.containsBean(TaskManagementConfigUtils.ASYNC_EXECUTION_ASPECT_BEAN_NAME)) {
                throw asyncOutsideTheLease(async, "@Async is woven in by AspectJ (@EnableAsync(mode = ASPECTJ)), "
                        + "inside any proxy");
            }
            asyncBeans.put(beanName, async);
        }
        dependOnTemplate(beanName);
        if (bean instanceof Advised advised && !advised.isFrozen()) {
            int lastAsync = lastAsyncAdvisor(advised.getAdvisors());
            if (lastAsync >= 0) {
                advised.addAdvisor(lastAsync + 1, advisor);
                return bean;
            }
        }
        // When an @Async post-processor runs later, it puts its advisor first, in front of this one.
        return super.postProcessAfterInitialization(bean, beanName);
    }

    @Override
    public void afterSingletonsInstantiated() {
        asyncBeans.forEach(this::checkAsyncIsOutsideTheLease);
        var methods = registry.all();
        if (methods.isEmpty()) {
            return;
        }
        LeaseEngine engine = engine();
        if (engine == null && methods.stream().anyMatch(LeasedMethod::reactive)) {
            throw new LeaseConfigurationException(methods.stream().filter(LeasedMethod::reactive)
                    .map(LeasedMethod::culprit).sorted().collect(Collectors.joining(", ")) + " return(s) Mono or "
                    + "Flux, which run on the LeaseEngine, and there is no single LeaseEngine bean (an application's "
                    + "own LeaseTemplate cannot run them).", "keep the starter's LeaseEngine bean next to your "
                            + "LeaseTemplate, or declare a ReactiveLeaseTemplate bean.");
        }
        if (engine == null) {
            log.info(methods.size() + " @Leased method(s) not checked at startup: the LeaseTemplate bean is not a "
                    + "LeaseEngine and there is no LeaseEngine bean to check their routing, timing and names against");
            return;
        }
        for (LeasedMethod method : methods) {
            // A reactive template with a fence of its own advances it at grant; the engine needs none for that.
            boolean fencedByEngine = method.fence() != null && !(method.reactive() && reactive.get().fencesAtGrant());
            if (method.fence() != null && !fencedByEngine && method.kind() != LeaseKind.CORRECTNESS) {
                throw new LeaseConfigurationException(method.culprit() + ": fence at grant needs a fencing token, "
                        + "but the lease is " + method.kind() + ".", "remove fence, or make the lease CORRECTNESS if "
                                + "a duplicate would corrupt data.");
            }
            engine.validate(method.culprit(), method.kind(), method.ttl(), method.renewEvery(), fencedByEngine);
            StartupNameCheck.check(engine, method.culprit(), method.kind(), method.name(), "nightly-report");
        }
    }

    /** The engine behind the template: the template itself, or the one engine bean next to it. */
    private LeaseEngine engine() {
        if (leases.getObject() instanceof LeaseEngine engine) {
            return engine;
        }
        return beanFactory == null ? null : beanFactory.getBeanProvider(LeaseEngine.class).getIfUnique();
    }

    @Override
    public boolean requiresDestruction(Object bean) {
        return bean instanceof LeaseTemplate;
    }

    @Override
    public void postProcessBeforeDestruction(Object bean, String beanName) {
        if (!(bean instanceof LeaseTemplate)) {
            return;
        }
        try {
            if (!calls.closeAndAwait(SHUTDOWN_WAIT)) {
                log.warn(calls.running() + " @Leased call(s) still running " + Durations.format(SHUTDOWN_WAIT) + " after "
                        + "shutdown began; closing the lease template now, which interrupts them and fails them with "
                        + "LeaseLostException.");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Advised beans call the template through a lazy provider, which Spring does not count as a dependency. */
    private void dependOnTemplate(String beanName) {
        if (beanFactory == null) {
            return;
        }
        for (String templateName : beanFactory.getBeanNamesForType(LeaseTemplate.class, false, false)) {
            if (!templateName.equals(beanName)) {
                beanFactory.registerDependentBean(templateName, beanName);
            }
        }
    }

    /**
     * Advisors added after this post-processor ran, behind the lease advisor, may still hand the body off to
     * another thread; only the final proxy of a singleton shows them.
     */
    private void checkAsyncIsOutsideTheLease(String beanName, List<LeasedMethod> async) {
        if (beanFactory == null || !(beanFactory.getSingleton(beanName) instanceof Advised advised)) {
            return;
        }
        Advisor[] advisors = advised.getAdvisors();
        int lease = List.of(advisors).indexOf(advisor);
        if (lastAsyncAdvisor(advisors) > lease) {
            throw asyncOutsideTheLease(async, "an async advisor of bean '" + beanName
                    + "' was added behind the lease advisor");
        }
    }

    private static int lastAsyncAdvisor(Advisor[] advisors) {
        for (int i = advisors.length - 1; i >= 0; i--) {
            if (advisors[i].getAdvice() instanceof AsyncExecutionInterceptor) {
                return i;
            }
        }
        return -1;
    }

    private static LeaseConfigurationException asyncOutsideTheLease(List<LeasedMethod> methods, String why) {
        String named = methods.stream().map(m -> m.describe() + " (lease " + m.describeName() + ")")
                .sorted().collect(Collectors.joining(", "));
        return new LeaseConfigurationException("@Async on " + named + " would run without the lease: " + why
                + ", so the lease would be taken on the caller's thread and released as soon as the task is handed "
                + "to the executor.",
                "use @EnableAsync in its default proxy mode and let it add the async advisor (any order works), or "
                        + "add a custom async advisor in front of the existing ones (Advised.addAdvisor(0, ...)); or "
                        + "drop @Async here and call this method from an @Async method.");
    }
}
