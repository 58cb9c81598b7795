package dev.lease.faults.scenarios.spring;

import java.util.Random;
import java.util.concurrent.CompletableFuture;

import javax.sql.DataSource;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseUnavailableException;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.faults.workload.Worker;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.scenarios.spring.WorkloadRecorder.Inside;
import dev.lease.faults.scenarios.spring.WorkloadRecorder.Writer;

/**
 * The application of the Spring workload scenarios: the library's auto-configuration on ZooKeeper, transactions on
 * the ledger's DataSource, {@code @Async} and the beans whose {@code @Leased} methods run through the real proxy.
 * Every instance is one context of it, told its id and recorder by a {@link Workload} bean.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ LeaseAutoConfiguration.class })
@EnableTransactionManagement
@EnableAsync
class WorkloadApp {

    /** Lease name of the {@code @Scheduled} SKIP job. */
    static final String SCHEDULED_LEASE = "wl-scheduled";

    /** Worker slot of an instance's scheduled job: worker id = instance * 100 + slot. */
    static final int SCHEDULED_SLOT = 90;

    /** Which instance this context is, and where its beans record. */
    record Workload(int instance, WorkloadRecorder recorder, DataSource ledgerDataSource) {
    }

    @Bean
    PlatformTransactionManager transactionManager(Workload workload) {
        return new DataSourceTransactionManager(workload.ledgerDataSource());
    }

    @Bean
    ThreadPoolTaskExecutor taskExecutor(Workload workload) {
        ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
        executor.setCorePoolSize(2);
        executor.setThreadNamePrefix("wl-i" + workload.instance() + "-async-");
        return executor;
    }

    @Bean
    NestedOuter nestedOuter(Workload workload, NestedInner inner) {
        return new NestedOuter(workload.recorder(), inner);
    }

    @Bean
    NestedInner nestedInner(Workload workload) {
        return new NestedInner(workload.recorder());
    }

    @Bean
    TransactionalJob transactionalJob(Workload workload) {
        return new TransactionalJob(workload.recorder());
    }

    @Bean
    AsyncJob asyncJob(Workload workload) {
        return new AsyncJob(workload.recorder());
    }

    @Bean
    Waiter waiter(Workload workload) {
        return new Waiter(workload.recorder());
    }

    /** Lease names of the nested sections. */
    static final String OUTER = "wl-outer";
    static final String INNER = "wl-inner";

    /** The outer section: calls the inner one through its proxy, then works and writes under its own token. */
    static class NestedOuter {

        private final WorkloadRecorder recorder;
        private final NestedInner inner;

        NestedOuter(WorkloadRecorder recorder, NestedInner inner) {
            this.recorder = recorder;
            this.inner = inner;
        }

        @Leased(name = OUTER, kind = LeaseKind.CORRECTNESS, waitFor = "${workload.wait-for}")
        public void outer(int worker, Op acquire, long innerHoldMillis, long holdMillis) throws InterruptedException {
            recorder.body(OUTER, worker, acquire, holdMillis, Writer.OWN_TRANSACTION, () -> {
                Op innerAcquire = recorder.invoke(INNER, worker);
                Throwable failure = null;
                try {
                    inner.inner(worker, innerAcquire, innerHoldMillis);
                }
                catch (Throwable ex) {
                    failure = ex;
                }
                recorder.finish(INNER, worker, innerAcquire, failure);
                if (failure instanceof InterruptedException interrupted) {
                    throw interrupted;
                }
                // A lost or busy inner lease is the inner section's business: the outer one goes on while it holds.
                if (failure != null && !(failure instanceof LeaseLostException)
                        && !(failure instanceof LeaseUnavailableException)) {
                    throw new IllegalStateException("inner section failed", failure);
                }
            });
        }
    }

    /** The inner section, nested in the outer one on the same thread. */
    static class NestedInner {

        private final WorkloadRecorder recorder;

        NestedInner(WorkloadRecorder recorder) {
            this.recorder = recorder;
        }

        @Leased(name = INNER, kind = LeaseKind.CORRECTNESS, waitFor = "${workload.wait-for}")
        public void inner(int worker, Op acquire, long holdMillis) throws InterruptedException {
            recorder.body(INNER, worker, acquire, holdMillis, Writer.OWN_TRANSACTION, Inside.NONE);
        }
    }

    /** {@code @Leased} around {@code @Transactional}: the fenced write commits in the method's transaction. */
    static class TransactionalJob {

        private final WorkloadRecorder recorder;

        TransactionalJob(WorkloadRecorder recorder) {
            this.recorder = recorder;
        }

        @Leased(name = "#{#lease}", kind = LeaseKind.CORRECTNESS, waitFor = "${workload.wait-for}")
        @Transactional
        public void run(String lease, int worker, Op acquire, long holdMillis) throws InterruptedException {
            recorder.body(lease, worker, acquire, holdMillis, Writer.CALLERS_TRANSACTION, Inside.NONE);
        }
    }

    /** {@code @Async @Leased}: the lease is taken, held and lost on the executor's thread. */
    static class AsyncJob {

        private final WorkloadRecorder recorder;

        AsyncJob(WorkloadRecorder recorder) {
            this.recorder = recorder;
        }

        @Async
        @Leased(name = "#{#lease}", kind = LeaseKind.CORRECTNESS, waitFor = "${workload.wait-for}")
        public CompletableFuture<Void> run(String lease, int worker, Op acquire, long holdMillis)
                throws InterruptedException {
            recorder.body(lease, worker, acquire, holdMillis, Writer.OWN_TRANSACTION, Inside.NONE);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Waits up to {@code workload.waiter-wait-for} for a busy lease. */
    static class Waiter {

        private final WorkloadRecorder recorder;

        Waiter(WorkloadRecorder recorder) {
            this.recorder = recorder;
        }

        @Leased(name = "#{#lease}", kind = LeaseKind.CORRECTNESS, waitFor = "${workload.waiter-wait-for}")
        public void run(String lease, int worker, Op acquire, long holdMillis) throws InterruptedException {
            recorder.body(lease, worker, acquire, holdMillis, Writer.OWN_TRANSACTION, Inside.NONE);
        }
    }

    /** A job every instance schedules; whoever finds the lease busy skips the tick. */
    static class ScheduledJob {

        /** The ACQUIRE the scheduler's decorator invoked for the run on this thread. */
        static final ThreadLocal<Op> ACQUIRE = new ThreadLocal<>();

        /** What the run on this thread threw, as the scheduler's error handler saw it. */
        static final ThreadLocal<Throwable> FAILURE = new ThreadLocal<>();

        private final WorkloadRecorder recorder;
        private final int worker;
        private final Random random;
        private final long longHoldMillis;

        ScheduledJob(WorkloadRecorder recorder, int worker, long longHoldMillis) {
            this.recorder = recorder;
            this.worker = worker;
            this.random = new Random(worker);
            this.longHoldMillis = longHoldMillis;
        }

        @Scheduled(fixedRateString = "${workload.tick}")
        @Leased(name = SCHEDULED_LEASE, kind = LeaseKind.CORRECTNESS, whenBusy = WhenBusy.SKIP)
        public void tick() throws InterruptedException {
            // Now and then a run long enough to be lost inside when its instance is cut off.
            long hold = random.nextInt(5) == 0 ? longHoldMillis : 20 + random.nextInt(300);
            recorder.body(SCHEDULED_LEASE, worker, ACQUIRE.get(), hold, Writer.OWN_TRANSACTION, Inside.NONE);
        }
    }
}
