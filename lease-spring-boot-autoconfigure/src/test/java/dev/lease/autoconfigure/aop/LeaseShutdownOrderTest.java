package dev.lease.autoconfigure.aop;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.core.LeaseEngine;

/**
 * On shutdown, scheduled leased work stops first and the lease engine closes last: the run in progress ends with
 * its lease still valid before the engine closes, and no run starts after that.
 */
class LeaseShutdownOrderTest {

    @ParameterizedTest
    @ValueSource(classes = {NoSchedulerBean.class, LifecycleScheduler.class})
    void theScheduledRunInProgressEndsBeforeTheEngineCloses(Class<?> scheduler) {
        Events events = new Events();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .withBean(Events.class, () -> events)
                .withUserConfiguration(JobConfig.class, scheduler)
                .run(context -> assertThat(events.awaitRunning()).as("a run started").isTrue());
        assertThat(events.list()).containsSubsequence("run started", "shutdown began", "run ended, lease valid",
                "engine closing");
        assertThat(events.list()).as("beans calling the engine go first").containsSubsequence("job destroyed",
                "engine closing");
        assertThat(events.list()).as("after the engine began to close").endsWith("engine closing");
    }

    static class Events implements ApplicationListener<ContextClosedEvent> {

        private final List<String> list = new ArrayList<>();
        private final CountDownLatch running = new CountDownLatch(1);
        private final CountDownLatch closing = new CountDownLatch(1);
        private final CountDownLatch engineClosing = new CountDownLatch(1);

        synchronized void add(String event) {
            list.add(event);
        }

        synchronized List<String> list() {
            return List.copyOf(list);
        }

        boolean awaitRunning() throws InterruptedException {
            return running.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public void onApplicationEvent(ContextClosedEvent event) {
            add("shutdown began");
            closing.countDown();
        }

        void engineClosing() {
            add("engine closing");
            engineClosing.countDown();
        }

        /**
         * Works until shutdown begins, then a while longer: long enough that an engine closed meanwhile would
         * interrupt the run and take its lease away.
         */
        void run(Lease lease) {
            add("run started");
            running.countDown();
            try {
                if (closing.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                    engineClosing.await(millis(500).toMillis(), TimeUnit.MILLISECONDS);
                }
                add("run ended, lease " + (lease.isValid() ? "valid" : "lost"));
            }
            catch (InterruptedException ex) {
                add("run interrupted, lease " + (lease.isValid() ? "valid" : "lost"));
                Thread.currentThread().interrupt();
            }
        }
    }

    static class Job {

        private final Events events;

        Job(Events events) {
            this.events = events;
        }

        @Scheduled(fixedDelay = 10)
        @Leased(name = "tick", kind = LeaseKind.EFFICIENCY)
        public void tick() {
            events.run(LeaseContext.current());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class JobConfig {

        @Bean
        Job job(Events events) {
            return new Job(events);
        }

        /** Not ordered, so it runs after the lease post-processor: just before the engine's close(). */
        @Bean
        static DestructionAwareBeanPostProcessor engineClosingProbe(Events events) {
            return new DestructionAwareBeanPostProcessor() {
                @Override
                public void postProcessBeforeDestruction(Object bean, String beanName) {
                    if (bean instanceof LeaseEngine) {
                        events.engineClosing();
                    }
                    else {
                        events.add("job destroyed");
                    }
                }

                @Override
                public boolean requiresDestruction(Object bean) {
                    return bean instanceof LeaseEngine || bean instanceof Job;
                }
            };
        }
    }

    /** The scheduled tasks run on the registrar's own executor, which no lifecycle stops. */
    @Configuration(proxyBeanMethods = false)
    static class NoSchedulerBean {
    }

    /** A scheduler bean, which as a SmartLifecycle lets its running tasks end before beans are destroyed. */
    @Configuration(proxyBeanMethods = false)
    static class LifecycleScheduler {

        @Bean
        ThreadPoolTaskScheduler taskScheduler() {
            return new ThreadPoolTaskScheduler();
        }
    }
}
