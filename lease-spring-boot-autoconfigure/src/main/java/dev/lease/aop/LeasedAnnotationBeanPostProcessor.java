package dev.lease.aop;

import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.context.expression.BeanFactoryResolver;

import dev.lease.Leased;
import dev.lease.core.LeaseEngine;

/**
 * Adds the lease advisor to every bean with a {@link Leased} method, checks each such method when its bean is
 * created, and checks their routing and timing once all singletons exist, so that a mistake fails the startup
 * rather than the first call.
 *
 * <p>The advisor goes in front of any advisor the bean already has, so a lease wraps {@code @Transactional}: the
 * transaction commits while the lease is still held and its validity is checked after the commit.
 */
public class LeasedAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    private final ObjectProvider<LeaseEngine> engine;
    private LeasedMethodRegistry registry;

    /** @param engine the engine, looked up lazily so that this post-processor does not create it early */
    public LeasedAnnotationBeanPostProcessor(ObjectProvider<LeaseEngine> engine) {
        this.engine = engine;
        setBeforeExistingAdvisors(true);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.registry = new LeasedMethodRegistry(
                beanFactory instanceof ConfigurableBeanFactory cbf ? new EmbeddedValueResolver(cbf) : value -> value,
                new BeanFactoryResolver(beanFactory));
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Leased.class, true),
                new LeaseInterceptor(registry, engine));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(bean, beanName)) {
            registry.inspect(AopUtils.getTargetClass(bean));
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    @Override
    public void afterSingletonsInstantiated() {
        var methods = registry.all();
        if (methods.isEmpty()) {
            return;
        }
        LeaseEngine leases = engine.getObject();
        for (LeasedMethod method : methods) {
            leases.validate("@Leased on " + method.describe(), method.kind(), method.ttl(), method.renewEvery());
        }
    }
}
