package dev.lease.fence.http;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.util.ClassUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.fence.Fence;
import dev.lease.fence.JdbcFence;

/**
 * Adds the {@link FencedRequest} advisor to every bean with such a method, parsing each annotation when its bean is
 * created (a template naming an unknown parameter fails the startup, naming the real ones).
 *
 * <p>The advisor goes <em>behind</em> the advisors a bean already has, so it runs inside {@code @Transactional}:
 * the fence joins the handler's transaction. Spring's auto-proxy creator (which adds the transaction advisor) runs
 * before this post-processor; if a bean is not proxied yet, the proxy made here is wrapped by any later one, which
 * keeps this advisor innermost too.
 */
final class FencedRequestPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    private static final boolean TRANSACTIONS = ClassUtils.isPresent(
            "org.springframework.transaction.annotation.AnnotationTransactionAttributeSource",
            FencedRequestPostProcessor.class.getClassLoader());

    private final FencedRequestMethods methods;
    private final Map<Class<?>, List<FencedRequestMethods.Parsed>> fencedClasses = new ConcurrentHashMap<>();
    private final ObjectProvider<Fence> fence;

    FencedRequestPostProcessor(ObjectProvider<Fence> fence) {
        this(fence, new FencedRequestMethods());
    }

    FencedRequestPostProcessor(ObjectProvider<Fence> fence, FencedRequestMethods methods) {
        this.fence = fence;
        this.methods = methods;
        setBeforeExistingAdvisors(false);
        // Handler methods are found on the bean's class: a JDK proxy would hide them from Spring MVC.
        setProxyTargetClass(true);
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, FencedRequest.class, true),
                new FencedRequestInterceptor(methods, fence));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        boolean eligible = bean instanceof Advised ? isEligible(targetClass) : isEligible(bean, beanName);
        if (eligible) {
            List<FencedRequestMethods.Parsed> found = methods.inspect(targetClass);
            if (!found.isEmpty()) {
                fencedClasses.put(ClassUtils.getUserClass(targetClass), found);
            }
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** With {@link JdbcFence}, each fenced handler must run in a transaction the fence can join. */
    @Override
    public void afterSingletonsInstantiated() {
        if (fencedClasses.isEmpty()) {
            return;
        }
        Fence resolved = fence.getIfUnique();
        if (resolved == null) {
            throw new LeaseConfigurationException(describe(fencedClasses.values().stream().flatMap(List::stream)
                    .toList()) + " need(s) a Fence bean to check tokens against, and there is "
                    + (fence.stream().findAny().isPresent() ? "more than one" : "none") + ".",
                    "add spring-boot-starter-jdbc (the auto-configured JdbcFence over the application's DataSource), "
                            + "or define exactly one Fence bean.");
        }
        if (!(resolved instanceof JdbcFence) || !TRANSACTIONS) {
            return;
        }
        List<FencedRequestMethods.Parsed> untransacted = Transactions.untransacted(fencedClasses);
        if (!untransacted.isEmpty()) {
            throw new LeaseConfigurationException(describe(untransacted) + " would advance the JdbcFence outside any "
                    + "transaction: the fence's row lock must hold until the handler's writes commit, and JdbcFence "
                    + "refuses to run without a transaction.",
                    "annotate the handler method (or its class) with @Transactional, so the fence and the handler's "
                            + "writes commit or roll back together.");
        }
    }

    /**
     * Everything that names a spring-tx type, apart: a service without spring-tx (a plain MVC one) must be able to load
     * and introspect the post-processor, which Spring does to every bean class (a lambda's parameter type in its
     * declared methods was enough to fail it with {@code NoClassDefFoundError}).
     */
    private static final class Transactions {

        static List<FencedRequestMethods.Parsed> untransacted(
                Map<Class<?>, List<FencedRequestMethods.Parsed>> classes) {
            AnnotationTransactionAttributeSource transactions = new AnnotationTransactionAttributeSource();
            return classes.entrySet().stream()
                    .flatMap(e -> e.getValue().stream()
                            .filter(p -> transactions.getTransactionAttribute(p.method(), e.getKey()) == null))
                    .toList();
        }
    }

    private static String describe(List<FencedRequestMethods.Parsed> methods) {
        return methods.stream().map(FencedRequestMethods.Parsed::describe).sorted().collect(Collectors.joining(", "));
    }
}
