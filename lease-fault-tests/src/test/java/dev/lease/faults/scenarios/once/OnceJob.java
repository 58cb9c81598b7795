package dev.lease.faults.scenarios.once;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.transaction.PlatformTransactionManager;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.Once;
import dev.lease.WhenBusy;
import dev.lease.aop.OnceAnnotationBeanPostProcessor;
import dev.lease.aop.OnceListener;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.OnceAutoConfiguration;
import dev.lease.faults.mutants.Mutant;
import dev.lease.once.JdbcOnceStore;
import dev.lease.spi.OnceStore;

/**
 * One instance of the application of {@link ScheduledOnceFaultScenariosTest}: a job ticking every second under an
 * EFFICIENCY lease of its own in-memory store (so the instances' leases never exclude each other, as when a holder is
 * paused past its ttl) with {@code @Once(key = "job-#{period}")}, its effect a row of {@code job_effect} written in
 * the key's transaction, and {@code #{period}} read on this host's clock, set apart from the others'. The nemesis
 * strikes inside a run through {@link #arm}: the hook runs after the effect is written, before the commit. The
 * instances of a scenario run in one JVM, and share the counts and the hook.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({LeaseAutoConfiguration.class, OnceAutoConfiguration.class, DataSourceAutoConfiguration.class,
    DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class})
@EnableScheduling
class OnceJob {

    static final String KEY_PREFIX = "job-";

    /** What every instance of this JVM did in the current run; {@link #reset} before each. */
    static final AtomicInteger bodies = new AtomicInteger();
    static final AtomicInteger skipped = new AtomicInteger();

    /** The nemesis's hook, run inside the next run of any instance, given its index. */
    private static final AtomicReference<IntConsumer> armed = new AtomicReference<>();

    private final JdbcTemplate jdbc;
    private final int instance;
    private volatile boolean stopped;

    OnceJob(JdbcTemplate jdbc, Environment environment) {
        this.jdbc = jdbc;
        this.instance = environment.getRequiredProperty("job.instance", Integer.class);
    }

    static void reset() {
        bodies.set(0);
        skipped.set(0);
        armed.set(null);
    }

    /** This host's clock, set apart from the others'. */
    static Clock clock(Environment environment) {
        return Clock.offset(Clock.systemUTC(),
                Duration.ofMillis(environment.getRequiredProperty("job.clock-offset", Long.class)));
    }

    @Bean
    static OnceAnnotationBeanPostProcessor onceAnnotationBeanPostProcessor(ObjectProvider<OnceStore> stores,
            ObjectProvider<OnceListener> listeners, Environment environment) {
        return new OnceAnnotationBeanPostProcessor(stores, listeners, Duration.ofSeconds(5), clock(environment));
    }

    @Bean
    OnceStore onceStore(DataSource dataSource, PlatformTransactionManager transactions) {
        return new KeyedStore(new JdbcOnceStore(dataSource, transactions));
    }

    @Bean
    OnceListener skippedRuns() {
        return (declaredKey, key, ran) -> {
            if (!ran) {
                skipped.incrementAndGet();
            }
        };
    }

    /**
     * Runs {@code hook} inside the next run of whichever instance runs its body first (the others skip that period),
     * after its effect, before its commit.
     */
    static void arm(IntConsumer hook) {
        armed.set(hook);
    }

    void stop() {
        stopped = true;
    }

    @Scheduled(fixedRate = 1000)
    @Leased(name = "job", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
    @Once(key = KEY_PREFIX + "#{period}")
    public void run() {
        if (stopped) {
            // Rolls the key back: only runs with an effect commit one, so every committed key must have one.
            throw new IllegalStateException("the scenario is over");
        }
        bodies.incrementAndGet();
        jdbc.update("INSERT INTO job_effect (once_key, instance) VALUES (?, ?)", KeyedStore.current.get(), instance);
        IntConsumer hook = armed.getAndSet(null);
        if (hook != null) {
            hook.accept(instance);
        }
    }

    /** Sleeps for {@code length}, deaf to interrupts (those of a lost lease or a closing scheduler), as a paused JVM. */
    static void pause(Duration length) {
        long end = System.nanoTime() + length.toNanos();
        boolean interrupted = false;
        while (System.nanoTime() < end) {
            try {
                Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The job's store, telling the body its key. Against the {@linkplain Mutant#FENCE fence mutant} every call records
     * a key of its own ({@code job-<period>#<uuid>}), so the key guards nothing: the job as if it had no {@code @Once},
     * with everything else (the transaction, the lease, the faults) the same.
     */
    record KeyedStore(OnceStore store) implements OnceStore {

        static final ThreadLocal<String> current = new ThreadLocal<>();

        @Override
        public boolean runOnce(String key, Optional<FencingToken> token, Duration wait, Work work) throws Throwable {
            String recorded = Mutant.active() == Mutant.FENCE ? key + "#" + UUID.randomUUID() : key;
            return store.runOnce(recorded, token, wait, () -> {
                current.set(key);
                try {
                    work.run();
                }
                finally {
                    current.remove();
                }
            });
        }

        @Override
        public void verify(String users) {
            store.verify(users);
        }
    }
}
