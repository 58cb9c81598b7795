package dev.lease.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

import dev.lease.LeaseTemplate;
import dev.lease.aop.LeaderOnlyAnnotationBeanPostProcessor;
import dev.lease.aop.LeasedAnnotationBeanPostProcessor;
import dev.lease.aop.SpringLeaderElections;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.core.LeaseEngineListener;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;

/**
 * Routes each lease kind to a backend, creates the {@link LeaseEngine} (the {@link LeaseTemplate} bean, unless the
 * application defines its own) and advises {@code @Leased} methods, whose calls go through that bean. The backends
 * ({@link LeaseBackend} beans) come from one configuration per {@link BackendType}, imported here and each guarded
 * by {@link ConditionalOnLeaseBackend}, after the auto-configurations of the clients they reuse. Unknown
 * {@code lease.*} keys fail the startup before any bean is created ({@link LeasePropertyNamesCheck}).
 */
@AutoConfiguration(afterName = {"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})
@EnableConfigurationProperties({LeaseProperties.class, LeaderElectionProperties.class})
@Import({InMemoryLeaseConfiguration.class, ZooKeeperLeaseConfiguration.class, RedisLeaseConfiguration.class,
        JdbcLeaseConfiguration.class, KubernetesLeaseConfiguration.class, RedlockLeaseConfiguration.class,
        EtcdLeaseConfiguration.class})
public class LeaseAutoConfiguration {

    private static final Log log = LogFactory.getLog(LeaseAutoConfiguration.class);

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public LeaseAutoConfiguration() {
    }

    @Bean
    static LeasePropertyNamesCheck leasePropertyNamesCheck() {
        return new LeasePropertyNamesCheck();
    }

    @Bean
    static LeaseStoreStartupCheck leaseStoreStartupCheck(ConfigurableListableBeanFactory beanFactory) {
        return new LeaseStoreStartupCheck(beanFactory);
    }

    @Bean
    @ConditionalOnMissingBean
    BackendRouter leaseBackendRouter(ObjectProvider<LeaseBackend<?>> backends, LeaseProperties properties,
            ObjectProvider<RoutedBackendCheck> checks) {
        BackendRouter router = BackendSelection.select(backends.orderedStream().toList(), properties.getBackend(),
                properties.getCorrectnessBackend(), properties.getEfficiencyBackend());
        checks.orderedStream().forEach(check -> check.check(router));
        log.info("Lease backends: " + router.describe()
                + ". A lease is a hint, not a guarantee, unless the resource checks its fencing token.");
        return router;
    }

    /** Steps aside for the application's own {@link LeaseTemplate}, which may build on the router bean. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LeaseTemplate.class)
    LeaseEngine leaseEngine(BackendRouter leaseBackendRouter, LeaseProperties properties,
            ObjectProvider<GrantFence> grantFence, ObjectProvider<LeaseEngineListener> listeners) {
        return LeaseEngine.builder(leaseBackendRouter)
                .defaults(new LeaseDefaults(properties.getDefaultTtl(), properties.getRenewEvery()))
                .grantFence(grantFence.getIfUnique()).listeners(listeners.orderedStream().toList()).build();
    }

    /** Releases the leases held over by holdAtLeast as the context stops, while the stores' clients still run. */
    @Bean
    HeldOverLeases leaseHeldOverReleases(ObjectProvider<LeaseEngine> engine) {
        return new HeldOverLeases(engine);
    }

    /** Elections declared by @LeaderOnly methods and lease.leader.elections.*; campaigns while the context runs. */
    @Bean
    @ConditionalOnMissingBean
    SpringLeaderElections leaderElections(ObjectProvider<LeaseEngine> engine, LeaderElectionProperties leader) {
        return new SpringLeaderElections(engine, leader.getElections().entrySet().stream()
                .map(entry -> new SpringLeaderElections.Declaration(entry.getKey(), entry.getValue().getKind(),
                        entry.getValue().getTtl(), entry.getValue().getRenewEvery(),
                        "lease.leader.elections." + entry.getKey()))
                .toList());
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyAnnotationBeanPostProcessor(
            ObjectProvider<SpringLeaderElections> elections) {
        return new LeaderOnlyAnnotationBeanPostProcessor(elections);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LeasedAnnotationBeanPostProcessor leasedAnnotationBeanPostProcessor(ObjectProvider<LeaseTemplate> leases) {
        return new LeasedAnnotationBeanPostProcessor(leases);
    }
}
