package dev.lease.autoconfigure.aop;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.AsyncAnnotationAdvisor;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.scheduling.config.TaskManagementConfigUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.lease.aop.LeasedAnnotationBeanPostProcessor;
import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.LeaseConfigurationException;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * {@code @Async} with {@code @Leased}: the lease is taken on the thread that runs the body and held for the whole
 * body, never only around the hand-off to the executor.
 */
class LeasedAsyncTest {

    private final ApplicationContextRunner base = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory")
            .withUserConfiguration(AsyncConfig.class);

    private final ApplicationContextRunner runner = base.withUserConfiguration(DefaultAsync.class);

    @ParameterizedTest
    @ValueSource(classes = {DefaultAsync.class, AsyncFirst.class, LeaseFirst.class})
    void concurrentAsyncCallsOfACorrectnessMethodNeverOverlapAndEachBodyHoldsItsLease(Class<?> order) {
        base.withUserConfiguration(order).run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            Probe probe = context.getBean(Probe.class);
            for (int i = 0; i < 3; i++) {
                jobs.exclusive();
            }
            assertThat(probe.awaitBodies(3)).as("bodies that finished").isTrue();
            assertThat(probe.maxInside()).as("bodies running at once").isEqualTo(1);
            assertThat(probe.seen()).hasSize(3).allSatisfy(seen -> assertThat(seen)
                    .startsWith("lease exclusive valid token ").contains("on task-"));
            assertThat(probe.seen()).doesNotHaveDuplicates();
        });
    }

    @ParameterizedTest
    @ValueSource(classes = {DefaultAsync.class, AsyncFirst.class, LeaseFirst.class})
    void aBeanProxiedThroughItsInterfaceRunsItsAsyncBodyUnderTheLease(Class<?> order) {
        base.withUserConfiguration(order).withBean(Reports.class, NightlyReports::new).run(context -> {
            Reports reports = context.getBean(Reports.class);
            assertThat(reports.nightly().get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .startsWith("lease nightly valid token ").contains("on task-");
        });
    }

    @Test
    void aLostLeaseInterruptsTheAsyncBody() {
        runner.run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            Probe probe = context.getBean(Probe.class);
            jobs.blocking();
            assertThat(probe.awaitBlockingStarted()).as("blocking body started").isTrue();
            assertThat(context.getBean(InMemoryLeaseBackend.class).revoke("async-long")).as("lease held").isTrue();
            await().atMost(seconds(15)).until(probe::blockingInterrupted);
        });
    }

    @Test
    void aFutureReturningAsyncMethodHoldsTheLeaseUntilItsBodyEnds() {
        runner.withUserConfiguration(FutureConfig.class).run(context -> {
            AsyncFutures jobs = context.getBean(AsyncFutures.class);
            assertThat(jobs.future().get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .startsWith("lease async-future valid token ").contains("on task-");

            CompletableFuture<String> lost = jobs.blockingFuture();
            assertThat(context.getBean(Probe.class).awaitBlockingStarted()).isTrue();
            context.getBean(InMemoryLeaseBackend.class).revoke("async-long");
            assertThatThrownBy(() -> lost.get(seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("'async-long'");
        });
    }

    @Test
    void busyAsyncFuturesCompleteWithNullWhenSkippedAndFailWhenThrowing() {
        runner.withUserConfiguration(FutureConfig.class).run(context -> {
            AsyncFutures jobs = context.getBean(AsyncFutures.class);
            try (Lease held = context.getBean(LeaseTemplate.class).acquire(LeaseSpec.of("async-future", LeaseKind.EFFICIENCY))) {
                assertThat(held.isValid()).isTrue();
                assertThat(jobs.skipFuture().get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isNull();
                assertThatThrownBy(() -> jobs.future().get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseUnavailableException.class)
                        .hasMessageContaining("'async-future'");
            }
            assertThat(jobs.skipFuture().get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("ran");
        });
    }

    @Test
    void theLeaseSitsBetweenTheAsyncHandOffAndTheTransaction() {
        runner.withUserConfiguration(TxConfig.class).run(context -> {
            TxJob job = context.getBean(TxJob.class);
            assertThat(job.bill(7).get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).containsExactly(
                    "in method on task-: transaction active, lease invoice-7 valid",
                    "before commit: lease invoice-7 valid",
                    "after commit: lease invoice-7 valid");
        });
    }

    @Test
    void anAsyncAdvisorPutInsideTheLeaseIsRefusedAtStartup() {
        runner.withUserConfiguration(InnerAsyncConfig.class).run(context -> assertStartupFailure(context.getStartupFailure(),
                "@Async", "AsyncJobs.exclusive()", "'exclusive'"));
    }

    @Test
    void asyncWovenByAspectjIsRefusedAtStartup() {
        // What @EnableAsync(mode = ASPECTJ) registers: the hand-off is woven into the class, inside any proxy.
        runner.withBean(TaskManagementConfigUtils.ASYNC_EXECUTION_ASPECT_BEAN_NAME, Object.class, Object::new)
                .run(context -> assertStartupFailure(context.getStartupFailure(), "@Async", "AsyncJobs.exclusive()",
                        "'exclusive'", "AspectJ"));
    }

    private static void assertStartupFailure(Throwable failure, String... fragments) {
        assertThat(failure).as("startup failure").isNotNull();
        while (!(failure instanceof LeaseConfigurationException) && failure.getCause() != null) {
            failure = failure.getCause();
        }
        assertThat(failure).isInstanceOf(LeaseConfigurationException.class);
        assertThat(failure.getMessage()).contains(fragments).contains("Fix:");
    }

    /** Shared state of the bodies; a separate bean because the jobs bean is a proxy whose own fields are unset. */
    static class Probe {

        private final List<String> seen = new ArrayList<>();
        private final CountDownLatch blockingStarted = new CountDownLatch(1);
        private volatile boolean blockingInterrupted;
        private int inside;
        private int maxInside;
        private int finished;

        /**
         * Records the body's lease and waits, up to a bound, for another body to join it: overlapping bodies meet
         * here at once, exclusive ones each wait out the bound alone.
         */
        synchronized void body(String lease) throws InterruptedException {
            seen.add(lease + " on " + Thread.currentThread().getName());
            inside++;
            maxInside = Math.max(maxInside, inside);
            notifyAll();
            long deadline = System.nanoTime() + millis(300).toNanos();
            for (long left = deadline - System.nanoTime(); inside < 2 && left > 0; left = deadline - System.nanoTime()) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            inside--;
            finished++;
            notifyAll();
        }

        synchronized boolean awaitBodies(int count) throws InterruptedException {
            long deadline = System.nanoTime() + seconds(15).toNanos();
            for (long left = deadline - System.nanoTime(); finished < count && left > 0; left = deadline - System.nanoTime()) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return finished >= count;
        }

        synchronized int maxInside() {
            return maxInside;
        }

        synchronized List<String> seen() {
            return List.copyOf(seen);
        }

        void blockUntilInterrupted() {
            blockingStarted.countDown();
            try {
                Thread.sleep(seconds(120).toMillis());
            }
            catch (InterruptedException ex) {
                blockingInterrupted = true;
                Thread.currentThread().interrupt();
            }
        }

        boolean awaitBlockingStarted() throws InterruptedException {
            return blockingStarted.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }

        boolean blockingInterrupted() {
            return blockingInterrupted;
        }
    }

    static String describeLease(String name) {
        return LeaseContext.find(name)
                .map(l -> "lease " + l.name() + (l.isValid() ? " valid" : " invalid") + " token " + l.token().value())
                .orElse("no lease " + name);
    }

    static class AsyncJobs {

        private final Probe probe;

        AsyncJobs(Probe probe) {
            this.probe = probe;
        }

        @Async
        @Leased(name = "exclusive", kind = LeaseKind.CORRECTNESS, waitFor = "30s")
        public void exclusive() throws InterruptedException {
            probe.body(describeLease("exclusive"));
        }

        @Async
        @Leased(name = "async-long", kind = LeaseKind.CORRECTNESS, ttl = "1500ms")
        public void blocking() {
            probe.blockUntilInterrupted();
        }
    }

    static class AsyncFutures {

        private final Probe probe;

        AsyncFutures(Probe probe) {
            this.probe = probe;
        }

        @Async
        @Leased(name = "async-future", kind = LeaseKind.CORRECTNESS)
        public CompletableFuture<String> future() {
            return CompletableFuture.completedFuture(describeLease("async-future") + " on " + Thread.currentThread().getName());
        }

        @Async
        @Leased(name = "async-future", kind = LeaseKind.CORRECTNESS, whenBusy = WhenBusy.SKIP)
        public CompletableFuture<String> skipFuture() {
            return CompletableFuture.completedFuture("ran");
        }

        @Async
        @Leased(name = "async-long", kind = LeaseKind.CORRECTNESS, ttl = "1500ms")
        public CompletableFuture<String> blockingFuture() {
            probe.blockUntilInterrupted();
            return CompletableFuture.completedFuture("finished without the lease");
        }
    }

    /** @Async proxies a bean that implements an interface with a JDK proxy unless told otherwise. */
    interface Reports {
        CompletableFuture<String> nightly();
    }

    static class NightlyReports implements Reports {

        @Async
        @Leased(name = "nightly", kind = LeaseKind.CORRECTNESS)
        @Override
        public CompletableFuture<String> nightly() {
            return CompletableFuture.completedFuture(describeLease("nightly") + " on " + Thread.currentThread().getName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FutureConfig {

        @Bean
        AsyncFutures asyncFutures(Probe probe) {
            return new AsyncFutures(probe);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class DefaultAsync {
    }

    /** The @Async post-processor runs before the lease one. */
    @Configuration(proxyBeanMethods = false)
    @EnableAsync(order = Ordered.HIGHEST_PRECEDENCE)
    static class AsyncFirst {
    }

    /** The lease post-processor runs before the @Async one. */
    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class LeaseFirst {

        @Bean
        static LeasedAnnotationBeanPostProcessor leasedAnnotationBeanPostProcessor(ObjectProvider<LeaseTemplate> leases) {
            LeasedAnnotationBeanPostProcessor processor = new LeasedAnnotationBeanPostProcessor(leases);
            processor.setOrder(Ordered.HIGHEST_PRECEDENCE);
            return processor;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AsyncConfig {

        @Bean
        Probe probe() {
            return new Probe();
        }

        @Bean
        AsyncJobs asyncJobs(Probe probe) {
            return new AsyncJobs(probe);
        }

        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(4);
            executor.setThreadNamePrefix("task-");
            return executor;
        }
    }

    /** Adds an async advisor after every other one, as a post-processor whose order nobody controls might. */
    @Configuration(proxyBeanMethods = false)
    static class InnerAsyncConfig {

        @Bean
        static BeanPostProcessor innerAsync() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (bean instanceof AsyncJobs && bean instanceof Advised advised) {
                        advised.addAdvisor(new AsyncAnnotationAdvisor());
                    }
                    return bean;
                }
            };
        }
    }

    static class TxJob {

        @Async
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        @Transactional
        public CompletableFuture<List<String>> bill(long id) {
            List<String> events = new ArrayList<>();
            String thread = Thread.currentThread().getName().replaceAll("\\d+$", "");
            events.add("in method on " + thread + ": " + (TransactionSynchronizationManager.isActualTransactionActive()
                    ? "transaction active" : "no transaction") + ", " + leaseState("invoice-" + id));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    events.add("before commit: " + leaseState("invoice-" + id));
                }

                @Override
                public void afterCommit() {
                    events.add("after commit: " + leaseState("invoice-" + id));
                }
            });
            return CompletableFuture.completedFuture(events);
        }

        private static String leaseState(String name) {
            return LeaseContext.find(name).map(l -> "lease " + l.name() + (l.isValid() ? " valid" : " invalid"))
                    .orElse("no lease " + name);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class TxConfig {

        @Bean
        DataSource dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        TxJob txJob() {
            return new TxJob();
        }
    }
}
