package dev.lease.autoconfigure;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.dao.DataAccessException;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.Leased;
import dev.lease.fence.JdbcFence;
import dev.lease.spi.Credentials;

/**
 * The startup check of the auto-configured {@link JdbcFence}'s table, {@code lease_fence}, in the same words as the
 * lease table's. It runs once every bean exists, because the JdbcFence bean is there for every application with a
 * DataSource, whether it writes through it or not: an application that never writes a {@code lease_fence} row must
 * not be refused a table it does not use. So a missing or unreadable table fails the startup when something writes
 * through the fence, as far as the startup can tell: a {@code @Leased} method with a {@code fence}, a
 * {@code @FencedRequest} handler, a bean that has the fence injected, or a {@code @FenceColumn} entity (its deletes
 * keep their row's fence there as a tombstone). Otherwise it is said once at INFO, for a fence reached in ways the
 * startup cannot see ({@code LeaseSpec.withFence}, a bean looked up by hand).
 */
final class JdbcFenceTableCheck implements SmartInitializingSingleton {

    private static final Log log = LogFactory.getLog(JdbcFenceAutoConfiguration.class);

    private static final String FENCED_REQUEST = "dev.lease.fence.http.FencedRequest";

    private final ConfigurableListableBeanFactory beanFactory;
    private final Environment environment;
    private @Nullable JdbcFence fence;
    private @Nullable DataSource dataSource;

    JdbcFenceTableCheck(ConfigurableListableBeanFactory beanFactory, Environment environment) {
        this.beanFactory = beanFactory;
        this.environment = environment;
    }

    /** The auto-configured fence, to check once every bean exists. */
    void check(JdbcFence fence, DataSource dataSource) {
        this.fence = fence;
        this.dataSource = dataSource;
    }

    @Override
    public void afterSingletonsInstantiated() {
        JdbcFence checked = fence;
        DataSource db = dataSource;
        if (checked == null || db == null) {
            return; // the application declared a Fence of its own
        }
        List<String> writers = writersThrough(checked);
        if (!writers.isEmpty()) {
            JdbcStartupChecks checks = new JdbcStartupChecks("JdbcFence (written through by "
                    + String.join(", ", writers) + ")", "dev/lease/fence/schema-<platform>.sql",
                    "lease.fence.initialize-schema");
            checks.checkConnection(db, "spring.datasource", environment, "");
            checks.verifyTable(JdbcFence.TABLE, checked::verifySchema);
            return;
        }
        try {
            checked.verifySchema();
        }
        catch (DataAccessException ex) {
            log.info("JdbcFence cannot read its table '" + JdbcFence.TABLE + "' (" + Credentials.redact(
                    ex.getMostSpecificCause().getMessage()) + "), and nothing found at startup writes through it. Should anything do (JdbcFence"
                    + ".advance, LeaseSpec.withFence), create it with the DDL in dev/lease/fence/schema-<platform>.sql,"
                    + " or set lease.fence.initialize-schema: always.");
        }
    }

    /** What writes through the fence, as far as the startup can tell, for the message. */
    private List<String> writersThrough(JdbcFence checked) {
        List<String> writers = new ArrayList<>();
        for (String name : beanFactory.getBeanNamesForType(JdbcFence.class, false, false)) {
            if (beanFactory.getSingleton(name) == checked) {
                Arrays.stream(beanFactory.getDependentBeans(name)).map(bean -> "bean '" + bean + "'")
                        .forEach(writers::add);
            }
        }
        Class<? extends Annotation> fencedRequest = fencedRequest();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = typeOf(name);
            if (type == null) {
                continue;
            }
            ReflectionUtils.doWithMethods(type, method -> {
                if (writes(method, fencedRequest)) {
                    writers.add(ClassUtils.getShortName(type) + "." + method.getName());
                }
            }, ReflectionUtils.USER_DECLARED_METHODS);
        }
        if (ClassUtils.isPresent(FencedEntityNames.PRESENT, JdbcFenceTableCheck.class.getClassLoader())) {
            writers.addAll(FencedEntityNames.in(beanFactory));
        }
        return writers.stream().distinct().toList();
    }

    private static boolean writes(Method method, @Nullable Class<? extends Annotation> fencedRequest) {
        Leased leased = AnnotatedElementUtils.findMergedAnnotation(method, Leased.class);
        return leased != null && !leased.fence().isEmpty()
                || fencedRequest != null && AnnotatedElementUtils.hasAnnotation(method, fencedRequest);
    }

    /** The class behind a bean: its target, behind a proxy already made, else the type its definition tells. */
    private @Nullable Class<?> typeOf(String name) {
        try {
            Object singleton = beanFactory.containsSingleton(name) ? beanFactory.getSingleton(name) : null;
            Class<?> type = singleton != null ? AopProxyUtils.ultimateTargetClass(singleton)
                    : beanFactory.getType(name, false);
            return type != null ? ClassUtils.getUserClass(type) : null;
        }
        catch (RuntimeException ex) {
            return null; // an abstract definition, a type that cannot be told without creating the bean
        }
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Class<? extends Annotation> fencedRequest() {
        ClassLoader loader = JdbcFenceTableCheck.class.getClassLoader();
        return ClassUtils.isPresent(FENCED_REQUEST, loader)
                ? (Class<? extends Annotation>) ClassUtils.resolveClassName(FENCED_REQUEST, loader) : null;
    }
}
