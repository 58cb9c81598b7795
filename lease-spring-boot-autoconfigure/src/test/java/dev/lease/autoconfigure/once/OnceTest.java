package dev.lease.autoconfigure.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.Once;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.LeaseMetricsAutoConfiguration;
import dev.lease.autoconfigure.OnceAutoConfiguration;
import dev.lease.testing.TestTiming;
import reactor.core.publisher.Mono;

/**
 * {@code @Once} through the starter, two application contexts standing for two instances on one H2 database. Each
 * instance has its own in-memory lease backend, so their leases never exclude each other: what a holder paused past
 * its lease and its successor, or two hosts whose clocks differ, look like to the work. Every scenario runs a method
 * without {@code @Once} beside the one with it, which shows the duplicates {@code @Once} removes.
 */
class OnceTest {

    private static final Duration WAIT = TestTiming.seconds(30);

    private static ApplicationContextRunner instance(String database, Class<?> application) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class, OnceAutoConfiguration.class,
                        DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        JdbcTemplateAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory",
                        "spring.datasource.url=jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=60000",
                        "spring.datasource.generate-unique-name=false")
                .withUserConfiguration(application);
    }

    private static void twoInstances(Class<?> application, Consumer<List<AssertableApplicationContext>> test) {
        String database = "once-" + UUID.randomUUID();
        instance(database, application).run(a -> instance(database, application).run(b -> {
            assertThat(a).hasNotFailed();
            assertThat(b).hasNotFailed();
            test.accept(List.of(a, b));
        }));
    }

    @Test
    void concurrentCallsOfTwoInstancesWhoseLeasesDoNotExcludeEachOtherTakeEffectOnce() {
        twoInstances(Reports.class, instances -> {
            for (boolean once : new boolean[] {true, false}) {
                Reports first = instances.get(0).getBean(Reports.class);
                Reports second = instances.get(1).getBean(Reports.class);
                first.holdNext(new CountDownLatch(1));
                CompletableFuture<Optional<String>> holder = CompletableFuture.supplyAsync(
                        () -> once ? first.report("2026-12-06") : first.reportWithoutOnce("2026-12-06"));
                Awaitility.await().atMost(WAIT).until(() -> first.entered());
                CompletableFuture<Optional<String>> successor = CompletableFuture.supplyAsync(
                        () -> once ? second.report("2026-12-06") : second.reportWithoutOnce("2026-12-06"));
                if (once) {
                    Awaitility.await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> !successor.isDone());
                }
                first.release();
                assertThat(holder.join()).hasValue("2026-12-06");
                String table = once ? "report_effect" : "unguarded_effect";
                if (once) {
                    assertThat(successor.join()).as("the successor's call, skipped").isEmpty();
                    assertThat(effects(instances.get(0), table)).as("effects with @Once").isEqualTo(1);
                }
                else {
                    successor.join();
                    assertThat(effects(instances.get(0), table)).as("effects without @Once").isEqualTo(2);
                }
                first.holdNext(new CountDownLatch(0));
            }
        });
    }

    @Test
    void aFailedRunLeavesNoRecordAndTheRetryRunsOnce() {
        twoInstances(Reports.class, instances -> {
            Reports first = instances.get(0).getBean(Reports.class);
            Reports second = instances.get(1).getBean(Reports.class);
            first.failing(true);
            assertThatThrownBy(() -> first.report("2026-12-07")).hasMessageContaining("report failed");
            first.failing(false);
            assertThat(effects(instances.get(0), "report_effect")).isZero();
            assertThat(second.report("2026-12-07")).as("the retry").hasValue("2026-12-07");
            assertThat(first.report("2026-12-07")).as("a duplicate").isEmpty();
            assertThat(effects(instances.get(0), "report_effect")).isEqualTo(1);
        });
    }

    @Test
    void twoInstancesTickingTheSameCronTakeEffectOncePerTickUnderKeysEqualToTheFireTimes() {
        twoInstances(Ticking.class, instances -> {
            JdbcTemplate jdbc = instances.get(0).getBean(JdbcTemplate.class);
            Awaitility.await().atMost(WAIT).until(() -> jdbc.queryForObject(
                    "SELECT COUNT(DISTINCT once_key) FROM tick_effect", Integer.class) >= 3);
            instances.forEach(instance -> instance.getBean(Ticking.class).stop());
            List<Map<String, Object>> perKey = jdbc.queryForList(
                    "SELECT once_key, COUNT(*) AS n FROM tick_effect GROUP BY once_key");
            for (Map<String, Object> row : perKey) {
                LocalDateTime fire = LocalDateTime.parse((String) row.get("ONCE_KEY"));
                assertThat(fire.getNano()).as("a fire time, to the second").isZero();
                assertThat(((Number) row.get("N")).intValue()).as("effects of tick %s", fire).isEqualTo(1);
            }
            assertThat(jdbc.queryForObject("SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM unguarded_tick"
                    + " GROUP BY fire) t", Integer.class)).as("the same ticks without @Once").isEqualTo(2);
        });
    }

    @Test
    void everyCallIsCountedByItsDeclaredKeyAndOutcome() {
        instance("once-" + UUID.randomUUID(), Reports.class)
                .withConfiguration(AutoConfigurations.of(LeaseMetricsAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class).run(context -> {
                    Reports reports = context.getBean(Reports.class);
                    reports.report("2026-12-08");
                    reports.report("2026-12-08");
                    reports.report("2026-12-09");
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(meters.get("lease.once").tag("once.key", "report-#{#day}").tag("outcome", "ran")
                            .counter().count()).isEqualTo(2);
                    assertThat(meters.get("lease.once").tag("once.key", "report-#{#day}").tag("outcome", "skipped")
                            .counter().count()).isEqualTo(1);
                });
    }

    @Test
    void aOnceMethodWithoutADataSourceIsRefusedAtStartup() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class, OnceAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory").withUserConfiguration(NoDatabase.class)
                .run(context -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@Once on NoDatabase.report(String) (key 'report-#{#day}')")
                        .hasMessageContaining("DataSource"));
    }

    @Test
    void aMissingTableIsRefusedAtStartupWithItsDdlAndTheProperty() {
        instance("once-" + UUID.randomUUID(), Reports.class).withPropertyValues("lease.once.initialize-schema=never")
                .run(context -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@Once on Reports.report(String)")
                        .hasMessageContaining("CREATE TABLE IF NOT EXISTS lease_once")
                        .hasMessageContaining("lease.once.initialize-schema: always"));
    }

    @Test
    void aOnceMethodReturningMonoIsRefusedAtStartup() {
        instance("once-" + UUID.randomUUID(), Reactive.class)
                .run(context -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@Once on Reactive.report() (key 'report')")
                        .hasMessageContaining("returns Mono"));
    }

    private static int effects(AssertableApplicationContext instance, String table) {
        return instance.getBean(JdbcTemplate.class).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class Reports {

        // Read and set through methods: the bean is a class-based proxy, whose own fields are not the target's.
        private final JdbcTemplate jdbc;
        private volatile CountDownLatch entered = new CountDownLatch(1);
        private volatile CountDownLatch hold = new CountDownLatch(0);
        private volatile boolean fail;

        Reports(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
            jdbc.execute("CREATE TABLE IF NOT EXISTS report_effect (d VARCHAR(20))");
            jdbc.execute("CREATE TABLE IF NOT EXISTS unguarded_effect (d VARCHAR(20))");
        }

        /** The next call waits for {@link #release()} after its write. */
        public void holdNext(CountDownLatch release) {
            entered = new CountDownLatch(1);
            hold = release;
        }

        public boolean entered() {
            return entered.getCount() == 0;
        }

        public void release() {
            hold.countDown();
        }

        public void failing(boolean failing) {
            fail = failing;
        }

        @Leased(name = "report", kind = LeaseKind.EFFICIENCY)
        @Once(key = "report-#{#day}")
        public Optional<String> report(String day) {
            return write("report_effect", day);
        }

        @Leased(name = "report", kind = LeaseKind.EFFICIENCY)
        public Optional<String> reportWithoutOnce(String day) {
            return write("unguarded_effect", day);
        }

        private Optional<String> write(String table, String day) {
            jdbc.update("INSERT INTO " + table + " (d) VALUES (?)", day);
            entered.countDown();
            try {
                // A holder that ignores the interrupt and runs on.
                if (!hold.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            if (fail) {
                throw new IllegalStateException("report failed after its write");
            }
            return Optional.of(day);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Ticking {

        private final JdbcTemplate jdbc;
        private volatile boolean stopped;

        Ticking(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
            jdbc.execute("CREATE TABLE IF NOT EXISTS tick_effect (once_key VARCHAR(40))");
            jdbc.execute("CREATE TABLE IF NOT EXISTS unguarded_tick (fire VARCHAR(40))");
        }

        public void stop() {
            stopped = true;
        }

        @Scheduled(cron = "* * * * * *")
        @Once(key = "#{period}")
        public void tick() {
            if (!stopped) {
                jdbc.update("INSERT INTO tick_effect (once_key) SELECT once_key FROM lease_once "
                        + "WHERE once_key NOT IN (SELECT once_key FROM tick_effect) AND once_key LIKE '20%'");
            }
        }

        @Scheduled(cron = "* * * * * *")
        public void unguardedTick() {
            if (!stopped) {
                jdbc.update("INSERT INTO unguarded_tick (fire) VALUES (?)",
                        LocalDateTime.now().withNano(0).toString());
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Reactive {

        @Once(key = "report")
        public Mono<String> report() {
            return Mono.just("done");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NoDatabase {

        @Once(key = "report-#{#day}")
        public Optional<String> report(String day) {
            return Optional.of(day);
        }
    }
}
