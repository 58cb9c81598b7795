package dev.lease.faults.scenarios.once;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.Once;
import dev.lease.WhenBusy;
import dev.lease.aop.OnceAnnotationBeanPostProcessor;
import dev.lease.aop.OnceListener;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.OnceAutoConfiguration;
import dev.lease.faults.harness.Soak;
import dev.lease.spi.OnceStore;
import dev.lease.testing.PostgresServer;

/**
 * A scheduled job on three instances of an application sharing one PostgreSQL, ticking every second under an
 * EFFICIENCY lease with {@code whenBusy = SKIP} and {@code @Once(key = "job-#{period}")}, under faults no lease can
 * hide: each instance has its own lease store (so their leases never exclude each other, as when a holder is paused
 * past its ttl), a holder that now and then stays paused inside its transaction for longer than a period (ignoring
 * any interrupt), and clocks set apart by up to 400 ms. The effects are counted per period: exactly one for every
 * period in which a run committed, never two. The same ticks through a method without {@code @Once} (the mutant)
 * must show a period with more than one effect, or the scenario could not tell.
 */
class ScheduledOnceFaultScenariosTest {

    private static final int INSTANCES = 3;
    private static final long[] CLOCK_OFFSETS_MILLIS = {0, 250, -400};

    private static PostgresServer postgres;
    private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @BeforeAll
    static void startInstances() throws Exception {
        postgres = PostgresServer.start();
        new JdbcTemplate(postgres.dataSource()).execute("CREATE TABLE job_effect (once_key VARCHAR(255) NOT NULL)");
        new JdbcTemplate(postgres.dataSource()).execute("CREATE TABLE unguarded_effect (period VARCHAR(40) NOT NULL)");
        for (int i = 0; i < INSTANCES; i++) {
            instances.add(new SpringApplicationBuilder(Job.class).web(WebApplicationType.NONE)
                    .bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                    .properties(Map.of("lease.backend", "in-memory", "lease.default-ttl", "2s",
                            "lease.once.initialize-schema", "always", "lease.once.wait", "5s",
                            "spring.datasource.url", postgres.jdbcUrl(), "spring.main.register-shutdown-hook", "false",
                            "job.instance", String.valueOf(i), "job.clock-offset", String.valueOf(
                                    CLOCK_OFFSETS_MILLIS[i])))
                    .run());
        }
    }

    @AfterAll
    static void stopInstances() throws Exception {
        instances.forEach(ConfigurableApplicationContext::close);
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void everyPeriodTakesEffectOnceWithOnceAndMoreThanOnceWithout() {
        JdbcTemplate jdbc = new JdbcTemplate(postgres.dataSource());
        int periods = Soak.rounds(6);
        Awaitility.await().atMost(seconds(periods * 4L)).until(() -> jdbc.queryForObject(
                "SELECT COUNT(*) FROM job_effect", Integer.class) >= periods);
        instances.forEach(instance -> instance.getBean(Job.class).stop());

        List<Map<String, Object>> perPeriod = jdbc.queryForList(
                "SELECT once_key, COUNT(*) AS n FROM job_effect GROUP BY once_key ORDER BY once_key");
        assertThat(perPeriod).as("periods with an effect").hasSizeGreaterThanOrEqualTo(periods);
        for (Map<String, Object> period : perPeriod) {
            assertThat(((Number) period.get("n")).intValue()).as("effects of %s", period.get("once_key"))
                    .isEqualTo(1);
        }
        List<String> committedKeys = jdbc.queryForList("SELECT once_key FROM lease_once WHERE once_key LIKE 'job-%'",
                String.class);
        assertThat(perPeriod.stream().map(period -> (String) period.get("once_key")))
                .as("a period with a committed run has its effect").containsExactlyInAnyOrderElementsOf(committedKeys);

        Integer mostUnguarded = jdbc.queryForObject(
                "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM unguarded_effect GROUP BY period) t", Integer.class);
        assertThat(mostUnguarded).as("the mutant without @Once: most effects in one period").isGreaterThan(1);
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({LeaseAutoConfiguration.class, OnceAutoConfiguration.class, DataSourceAutoConfiguration.class,
        DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class})
    @EnableScheduling
    static class Job {

        private final JdbcTemplate jdbc;
        private final Random random;
        private final boolean pausing;
        private final Clock clock;
        private volatile boolean stopped;

        Job(JdbcTemplate jdbc, Environment environment) {
            this.jdbc = jdbc;
            int instance = environment.getRequiredProperty("job.instance", Integer.class);
            this.random = new Random(instance);
            this.pausing = instance == 0;
            this.clock = clock(environment);
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

        public void stop() {
            stopped = true;
        }

        @Scheduled(fixedRate = 1000)
        @Leased(name = "job", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        @Once(key = "job-#{period}")
        public void run() {
            if (stopped) {
                // Rolls the key back: only runs with an effect commit one, so every committed key must have one.
                throw new IllegalStateException("the scenario is over");
            }
            // The only key without an effect this transaction sees is its own: committed keys have theirs.
            jdbc.update("INSERT INTO job_effect (once_key) SELECT once_key FROM lease_once WHERE once_key LIKE 'job-%'"
                    + " AND once_key NOT IN (SELECT once_key FROM job_effect)");
            if (pausing && random.nextInt(3) == 0) {
                pause(Duration.ofMillis(2500));
            }
        }

        /** The same job without @Once: the mutant. */
        @Scheduled(fixedRate = 1000)
        @Leased(name = "unguarded-job", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public void runWithoutOnce() {
            if (!stopped) {
                long window = Math.floorDiv(clock.millis(), 1000);
                jdbc.update("INSERT INTO unguarded_effect (period) VALUES (?)", String.valueOf(window));
            }
        }

        /** A holder paused inside its transaction, deaf to the interrupt of its lost lease. */
        private static void pause(Duration length) {
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
    }
}
