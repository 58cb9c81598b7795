package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerCustomizer;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import dev.lease.core.LeaseEngine;

/**
 * Scheduled runs whose lease store cannot be reached are skipped with one WARN per outage
 * ({@link StoreOutageErrorHandler}) on the task scheduler Spring Boot builds; {@code lease.scheduling.quiet-outages:
 * false} leaves Spring's default (one ERROR with a stack trace per run). An application with a scheduler customizer
 * of its own does not get this one, so that the error handler it may set there is kept.
 */
@AutoConfiguration(after = LeaseAutoConfiguration.class, beforeName =
        "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration")
@ConditionalOnClass(ThreadPoolTaskSchedulerCustomizer.class)
@ConditionalOnBean(LeaseEngine.class)
@ConditionalOnProperty(name = "lease.scheduling.quiet-outages", matchIfMissing = true)
public class LeaseSchedulingAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public LeaseSchedulingAutoConfiguration() {
    }

    @Bean
    StoreOutageErrorHandler leaseStoreOutageErrorHandler() {
        return new StoreOutageErrorHandler();
    }

    /**
     * Only where the application customizes no scheduler itself: ordering alone did not keep an application's own
     * error handler (the leader-election sample's) from being replaced by this one.
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(ThreadPoolTaskSchedulerCustomizer.class)
    ThreadPoolTaskSchedulerCustomizer leaseStoreOutagesOnThreadPoolScheduler(StoreOutageErrorHandler handler) {
        return scheduler -> scheduler.setErrorHandler(handler);
    }

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(SimpleAsyncTaskSchedulerCustomizer.class)
    SimpleAsyncTaskSchedulerCustomizer leaseStoreOutagesOnSimpleAsyncScheduler(StoreOutageErrorHandler handler) {
        return scheduler -> scheduler.setErrorHandler(handler);
    }
}
