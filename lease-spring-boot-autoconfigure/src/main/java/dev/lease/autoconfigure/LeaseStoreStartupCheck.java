package dev.lease.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

import dev.lease.LeaseTemplate;
import dev.lease.leader.LeaderElections;

/**
 * Checks the lease stores (reachable, their table readable) once every bean exists, and only when something in the
 * application takes leases, as far as the startup can tell: a {@code @Leased} method, an election ({@code @LeaderOnly}
 * or {@code lease.leader.elections.*}), or a bean that has the {@link LeaseTemplate} (or the reactive one) injected.
 * A service that only checks tokens ({@code @FencedRequest}, {@code @FenceColumn}, {@code JdbcFence}) must start with
 * no lease store reachable; it is said once at INFO, for leases taken in ways the startup cannot see (a template
 * looked up by hand), whose first acquire then reports what the store answered.
 */
final class LeaseStoreStartupCheck implements SmartInitializingSingleton {

    private static final Log log = LogFactory.getLog(LeaseAutoConfiguration.class);

    private static final String REACTIVE_TEMPLATE = "dev.lease.reactive.ReactiveLeaseTemplate";

    private final ConfigurableListableBeanFactory beanFactory;
    private final Map<String, Runnable> checks = new LinkedHashMap<>();

    LeaseStoreStartupCheck(ConfigurableListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * @param store the backend, as the log names it, such as {@code jdbc}
     * @param check throws a {@code LeaseConfigurationException} naming the fix when the store cannot serve leases
     */
    synchronized void register(String store, Runnable check) {
        checks.put(store, check);
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<Runnable> toRun;
        synchronized (this) {
            if (checks.isEmpty()) {
                return;
            }
            toRun = new ArrayList<>(checks.values());
        }
        List<String> takers = takers();
        if (takers.isEmpty()) {
            log.info("Lease store(s) " + String.join(", ", checks.keySet()) + " not checked at startup: nothing found "
                    + "takes leases (no @Leased method, no election, no bean with the LeaseTemplate injected).");
            return;
        }
        log.debug("Checking lease store(s) " + String.join(", ", checks.keySet()) + " for " + takers);
        toRun.forEach(Runnable::run);
    }

    /** What takes leases, as far as the startup can tell; a non-empty list means the store must be checked. */
    private List<String> takers() {
        List<String> templates = new ArrayList<>(List.of(beanFactory.getBeanNamesForType(LeaseTemplate.class, true,
                false)));
        ClassLoader loader = LeaseStoreStartupCheck.class.getClassLoader();
        if (ClassUtils.isPresent(REACTIVE_TEMPLATE, loader) && ClassUtils.isPresent("reactor.core.publisher.Mono",
                loader)) {
            templates.addAll(List.of(beanFactory.getBeanNamesForType(ClassUtils.resolveClassName(REACTIVE_TEMPLATE,
                    loader), true, false)));
        }
        // @Leased beans are recorded as dependents of the template by the advisor's post-processor.
        List<String> takers = new ArrayList<>();
        for (String template : templates) {
            for (String dependent : beanFactory.getDependentBeans(template)) {
                if (!templates.contains(dependent)) {
                    takers.add("bean '" + dependent + "'");
                }
            }
        }
        beanFactory.getBeanProvider(LeaderElections.class).orderedStream().flatMap(elections -> elections.all()
                .stream()).forEach(election -> takers.add("election '" + election.election() + "'"));
        return takers.stream().distinct().toList();
    }
}
