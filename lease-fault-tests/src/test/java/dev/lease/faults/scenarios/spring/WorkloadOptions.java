package dev.lease.faults.scenarios.spring;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import dev.lease.faults.checker.History.Op;
import dev.lease.faults.scenarios.spring.WorkloadApp.ScheduledJob;
import dev.lease.faults.scenarios.spring.WorkloadApp.Workload;

/**
 * Configurations an instance of {@link WorkloadApp} adds only when its scenario needs them. Not nested in
 * {@code WorkloadApp}, whose nested configurations Spring would register in every instance.
 */
final class WorkloadOptions {

    private WorkloadOptions() {
    }

    /**
     * The {@code @Scheduled} SKIP job and its scheduler: one thread, whose task decorator records the ACQUIRE before
     * each proxied run, since nothing else stands between the scheduler and the proxy.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Scheduling {

        @Bean
        ThreadPoolTaskScheduler taskScheduler(Workload workload) {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setPoolSize(1);
            scheduler.setThreadNamePrefix("wl-i" + workload.instance() + "-scheduled-");
            scheduler.setTaskDecorator(recording(workload));
            // Depending on how the scheduler wraps a task, its failure reaches the decorator or only this handler;
            // both run on the task's thread.
            scheduler.setErrorHandler(ScheduledJob.FAILURE::set);
            return scheduler;
        }

        @Bean
        ScheduledJob scheduledJob(Workload workload, org.springframework.core.env.Environment environment) {
            return new ScheduledJob(workload.recorder(), workload.instance() * 100 + WorkloadApp.SCHEDULED_SLOT,
                    environment.getRequiredProperty("workload.long-hold-ms", Long.class));
        }

        private static TaskDecorator recording(Workload workload) {
            int worker = workload.instance() * 100 + WorkloadApp.SCHEDULED_SLOT;
            return task -> () -> {
                Op acquire = workload.recorder().invoke(WorkloadApp.SCHEDULED_LEASE, worker);
                ScheduledJob.ACQUIRE.set(acquire);
                Throwable failure = null;
                try {
                    task.run();
                }
                catch (Throwable ex) {
                    failure = ex instanceof java.lang.reflect.UndeclaredThrowableException u && u.getCause() != null
                            ? u.getCause() : ex;
                }
                finally {
                    ScheduledJob.ACQUIRE.remove();
                }
                Throwable handled = ScheduledJob.FAILURE.get();
                ScheduledJob.FAILURE.remove();
                if (failure == null && handled != null) {
                    failure = handled instanceof java.lang.reflect.UndeclaredThrowableException u
                            && u.getCause() != null ? u.getCause() : handled;
                }
                workload.recorder().finish(WorkloadApp.SCHEDULED_LEASE, worker, acquire, failure);
            };
        }
    }

    /**
     * The lease store of the JDBC backend: the application's one DataSource bean, a PostgreSQL of its own reached
     * through the instance's proxy. The ledger's DataSource is no bean, so the JDBC backend cannot take it.
     */
    @Configuration(proxyBeanMethods = false)
    static class JdbcStore {

        @Bean
        DataSource leaseStore(org.springframework.core.env.Environment environment) {
            org.postgresql.ds.PGSimpleDataSource dataSource = new org.postgresql.ds.PGSimpleDataSource();
            dataSource.setUrl(environment.getRequiredProperty("workload.store-url"));
            return dataSource;
        }
    }

}
