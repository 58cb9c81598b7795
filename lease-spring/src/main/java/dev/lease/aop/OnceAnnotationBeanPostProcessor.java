package dev.lease.aop;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import org.springframework.aop.framework.Advised;
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
import org.springframework.util.function.SingletonSupplier;

import dev.lease.LeaseConfigurationException;
import dev.lease.Once;
import dev.lease.spi.OnceStore;

/**
 * Adds the {@link Once} advisor to every bean with a {@code @Once} method, checks each such method when its bean is
 * created, and checks once all singletons exist that there is a {@link OnceStore} whose table and transactions work,
 * so that a mistake fails the startup rather than the first call.
 *
 * <p>The advisor goes behind the advisors the bean already has and behind the {@code @Leased} one, whichever of the
 * two post-processors runs first: the lease is taken first, then the method's own {@code @Transactional}
 * transaction begins, and the key is recorded in it, just before the body.
 */
public class OnceAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    private final ObjectProvider<OnceStore> stores;
    private final ObjectProvider<OnceListener> listeners;
    private final Duration wait;
    private final Clock clock;
    private OnceMethods methods;

    /**
     * @param stores where keys are recorded, looked up lazily (the auto-configuration's {@code JdbcOnceStore})
     * @param listeners told of every call's outcome, such as the {@code lease.once} counter
     * @param wait how long a call outside any leased section waits for another transaction recording its key
     *         ({@code lease.once.wait})
     */
    public OnceAnnotationBeanPostProcessor(ObjectProvider<OnceStore> stores, ObjectProvider<OnceListener> listeners,
            Duration wait) {
        this(stores, listeners, wait, Clock.systemUTC());
    }

    /**
     * As {@link #OnceAnnotationBeanPostProcessor(ObjectProvider, ObjectProvider, Duration)}, with the clock
     * {@code #{period}} reads: tests of hosts whose clocks differ give each instance its own.
     *
     * @param clock the clock of this host
     */
    public OnceAnnotationBeanPostProcessor(ObjectProvider<OnceStore> stores, ObjectProvider<OnceListener> listeners,
            Duration wait, Clock clock) {
        this.stores = Objects.requireNonNull(stores, "stores");
        this.listeners = Objects.requireNonNull(listeners, "listeners");
        this.wait = Objects.requireNonNull(wait, "wait");
        this.clock = Objects.requireNonNull(clock, "clock");
        setBeforeExistingAdvisors(false);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.methods = new OnceMethods(
                beanFactory instanceof ConfigurableBeanFactory cbf ? new EmbeddedValueResolver(cbf) : value -> value,
                new BeanFactoryResolver(beanFactory), clock);
        SingletonSupplier<List<OnceListener>> told = SingletonSupplier.of(() -> listeners.orderedStream().toList());
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Once.class, true),
                new OnceInterceptor(methods, SingletonSupplier.of(this::store), told, wait));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof Advised ? isEligible(AopUtils.getTargetClass(bean)) : isEligible(bean, beanName)) {
            methods.inspect(AopUtils.getTargetClass(bean));
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    @Override
    public void afterSingletonsInstantiated() {
        Collection<OnceMethod> found = methods.all();
        if (found.isEmpty()) {
            return;
        }
        String users = found.stream().map(OnceMethod::culprit).sorted().collect(Collectors.joining(", "));
        OnceStore store = stores.getIfUnique();
        if (store == null) {
            throw new LeaseConfigurationException(users + " need(s) a store for their keys, and there is none: "
                    + "@Once records them in the table lease_once of the application's DataSource, in the work's "
                    + "transaction, so it needs spring-jdbc, exactly one DataSource and its transaction manager.",
                    "add spring-boot-starter-jdbc (or spring-boot-starter-data-jpa) and a DataSource, or declare one "
                            + "OnceStore bean (new JdbcOnceStore(dataSource, transactionManager)).");
        }
        store.verify(users);
    }

    private OnceStore store() {
        OnceStore store = stores.getIfUnique();
        if (store == null) {
            throw new IllegalStateException("No single OnceStore bean for @Once methods");
        }
        return store;
    }
}
