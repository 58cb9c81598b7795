package dev.lease.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import reactor.core.publisher.Mono;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.core.HeldLeaseSnapshot;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;

/**
 * Asynchronous work returned by a method whose declared type does not show it (issue 32, item 4) fails the call
 * instead of running after the lease was released, through a real context: a Mono returned as {@code Object} is
 * never subscribed to, a future returned as an interface is cancelled; behind {@code @Async} a completed future is the
 * result and a pending one fails; {@code @LeaderOnly} is checked the same way.
 */
class EscapingAsyncResultsTest {

    @Test
    void aMonoReturnedAsObjectFailsTheCallAndNeverRuns() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, Jobs.class)) {
            Jobs jobs = context.getBean(Jobs.class);
            assertThatThrownBy(jobs::start).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageStartingWith("@Leased on Jobs.start() (lease 'start') returned a Mono "
                            + "(reactor.core.publisher.MonoCallable) although it is declared to return Object")
                    .hasMessageContaining("would run after the lease was released")
                    .hasMessageContaining("without being subscribed to")
                    .hasMessageContaining("Fix: declare the method to return Mono or Flux");
            assertThat(jobs.monoRan()).as("the returned Mono ran").isFalse();
            assertThat(held(context)).isEmpty();
            assertThat(jobs.plain()).as("a plain value declared Object").isEqualTo("done");
        }
    }

    @Test
    void aFutureReturnedAsAnInterfaceFailsTheCallAndIsCancelled() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, Jobs.class)) {
            Jobs jobs = context.getBean(Jobs.class);
            assertThatThrownBy(jobs::schedule).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageStartingWith("@Leased on Jobs.schedule() (lease 'schedule') returned a Future "
                            + "(java.util.concurrent.FutureTask) although it is declared to return Runnable")
                    .hasMessageContaining("It was cancelled");
            FutureTask<?> task = jobs.lastTask();
            assertThat(task.isCancelled()).isTrue();
            assertThat(jobs.taskInterrupted().await(30, TimeUnit.SECONDS)).as("the running task interrupted").isTrue();
            assertThat(held(context)).isEmpty();
        }
    }

    @Test
    void behindAsyncACompletedFutureIsTheResultAndAPendingOneFails() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, AsyncConfig.class, AsyncJobs.class)) {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            assertThat(jobs.completed().get(30, TimeUnit.SECONDS)).isEqualTo("done under the lease");
            assertThatThrownBy(() -> jobs.pending().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageStartingWith("@Leased on AsyncJobs.pending() (lease 'pending') returned a "
                            + "CompletionStage (java.util.concurrent.CompletableFuture) that had not completed")
                    .hasMessageContaining("Fix: complete the work inside the method");
            await().atMost(seconds(30)).until(() -> held(context).isEmpty());
        }
    }

    @Test
    void aLeaderOnlyMethodReturningAMonoAsObjectFailsTheCall() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, ReactiveLeasedMethodsTest.LeaderConfig.class,
                Reports.class)) {
            Leadership leadership = context.getBean(SpringLeaderElections.class).get("reports");
            await().atMost(seconds(30)).until(leadership::isLeader);
            assertThatThrownBy(context.getBean(Reports.class)::report).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageStartingWith("@LeaderOnly on Reports.report() (election 'reports') returned a Mono");
        }
    }

    private static List<String> held(AnnotationConfigApplicationContext context) {
        return context.getBean(LeaseEngine.class).held().stream().map(HeldLeaseSnapshot::name).toList();
    }

    static class Jobs implements AutoCloseable {

        private final AtomicBoolean monoRan = new AtomicBoolean();
        private final ExecutorService executor = Executors.newSingleThreadExecutor();
        private final CountDownLatch taskInterrupted = new CountDownLatch(1);
        private volatile FutureTask<?> lastTask;

        @Leased(name = "start", kind = LeaseKind.EFFICIENCY)
        public Object start() {
            return Mono.fromCallable(() -> monoRan.getAndSet(true));
        }

        @Leased(name = "plain", kind = LeaseKind.EFFICIENCY)
        public Object plain() {
            return "done";
        }

        @Leased(name = "schedule", kind = LeaseKind.EFFICIENCY)
        public Runnable schedule() throws InterruptedException {
            CountDownLatch started = new CountDownLatch(1);
            FutureTask<Void> task = new FutureTask<>(() -> {
                started.countDown();
                try {
                    Thread.sleep(Long.MAX_VALUE);
                }
                catch (InterruptedException ex) {
                    taskInterrupted.countDown();
                }
                return null;
            });
            lastTask = task;
            executor.execute(task);
            started.await();
            return task;
        }

        // Read through methods: the fields of a class proxy are not the target's.
        public boolean monoRan() {
            return monoRan.get();
        }

        public FutureTask<?> lastTask() {
            return lastTask;
        }

        public CountDownLatch taskInterrupted() {
            return taskInterrupted;
        }

        @Override
        public void close() {
            executor.shutdownNow();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncConfig {
    }

    static class AsyncJobs {

        @Async
        @Leased(name = "completed", kind = LeaseKind.EFFICIENCY)
        public CompletableFuture<String> completed() {
            return CompletableFuture.completedFuture("done under the lease");
        }

        @Async
        @Leased(name = "pending", kind = LeaseKind.EFFICIENCY)
        public CompletableFuture<String> pending() {
            return new CompletableFuture<>();
        }
    }

    static class Reports {

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public Object report() {
            return Mono.just("report");
        }
    }
}
