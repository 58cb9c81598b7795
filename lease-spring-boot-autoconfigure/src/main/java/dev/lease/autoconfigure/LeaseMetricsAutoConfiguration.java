package dev.lease.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.aop.OnceListener;
import dev.lease.fence.FenceListener;
import dev.lease.leader.LeaderElections;
import dev.lease.micrometer.FenceMetrics;
import dev.lease.micrometer.OnceMetrics;
import dev.lease.micrometer.LeaseAcquireObservationConvention;
import dev.lease.micrometer.LeaseMetrics;

/**
 * Micrometer metrics and observations of leases, when the application has a {@link MeterRegistry}: the engine
 * reports to {@link LeaseMetrics}, the {@code JdbcFence} to {@link FenceMetrics}. Acquires are observed through the
 * application's {@link ObservationRegistry} (so a tracer turns them into spans), or, without one, through a registry
 * of their own that only times them. Nothing here applies without Micrometer.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, ObservationRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
public class LeaseMetricsAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public LeaseMetricsAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    LeaseMetrics leaseMetrics(MeterRegistry meters, ObjectProvider<ObservationRegistry> observations,
            ObjectProvider<LeaseAcquireObservationConvention> convention) {
        return new LeaseMetrics(meters, observations.getIfUnique(() -> timing(meters)), convention.getIfUnique());
    }

    /** Once every election is declared (they are, when all singletons exist). */
    @Bean
    SmartInitializingSingleton leaseLeaderGauges(LeaseMetrics metrics, ObjectProvider<LeaderElections> elections) {
        return () -> elections.orderedStream().forEach(metrics::bindElections);
    }

    /** Without the application's registry, acquires still get their {@code lease.acquire} timer. */
    private static ObservationRegistry timing(MeterRegistry meters) {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        return registry;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FenceListener.class)
    static class Fences {

        @Bean
        @ConditionalOnMissingBean
        FenceMetrics leaseFenceMetrics(MeterRegistry meters) {
            return new FenceMetrics(meters);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(OnceListener.class)
    static class OnceCalls {

        @Bean
        @ConditionalOnMissingBean
        OnceMetrics leaseOnceMetrics(MeterRegistry meters) {
            return new OnceMetrics(meters);
        }
    }
}
