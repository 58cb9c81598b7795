package dev.lease.fence.jpa.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

import dev.lease.fence.jpa.once.OnceApp.Reports;
import dev.lease.testing.TestTiming;

/**
 * {@code @Once} with JPA writes (JpaTransactionManager): two instances of an application on one H2 database; the key
 * is inserted on the JDBC connection of the JPA transaction, so it commits or rolls back with the entity.
 */
class JpaOnceTest {

    private static final Duration WAIT = TestTiming.seconds(30);

    private ConfigurableApplicationContext first;
    private ConfigurableApplicationContext second;

    @BeforeEach
    void start() {
        String url = "jdbc:h2:mem:jpa-once-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=60000";
        first = OnceApp.start(url);
        second = OnceApp.start(url);
    }

    @AfterEach
    void stop() {
        second.close();
        first.close();
    }

    @Test
    void theTransactionsAreJpas() {
        assertThat(first.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
    }

    @Test
    void concurrentRunsOfTwoInstancesWriteOneEntityWithOnceAndTwoWithout() throws Exception {
        for (boolean once : new boolean[] {true, false}) {
            String period = (once ? "guarded-" : "unguarded-") + UUID.randomUUID();
            CountDownLatch written = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Optional<String>> holder = CompletableFuture.supplyAsync(
                    () -> call(first, once, period, written, release));
            assertThat(written.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Optional<String>> successor = CompletableFuture.supplyAsync(
                    () -> call(second, once, period, new CountDownLatch(1), new CountDownLatch(0)));
            if (once) {
                Awaitility.await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> !successor.isDone());
            }
            release.countDown();
            assertThat(holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).hasValue(period);
            Optional<String> second = successor.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (once) {
                assertThat(second).as("the successor's run, skipped").isEmpty();
            }
            assertThat(reports(period)).as(once ? "with @Once" : "without @Once").isEqualTo(once ? 1 : 2);
        }
    }

    @Test
    void aFailedRunRollsBackTheEntityAndTheKeyAndTheRetryRuns() {
        String period = "failing-" + UUID.randomUUID();
        Reports reports = first.getBean(Reports.class);
        assertThatThrownBy(() -> reports.write(period, new CountDownLatch(1), new CountDownLatch(0)))
                .hasMessageContaining("after its write");
        assertThat(reports(period)).isZero();
        assertThat(new JdbcTemplate(first.getBean(javax.sql.DataSource.class)).queryForObject(
                "SELECT COUNT(*) FROM lease_once WHERE once_key = ?", Integer.class, "report-" + period)).isZero();
    }

    private static Optional<String> call(ConfigurableApplicationContext instance, boolean once, String period,
            CountDownLatch written, CountDownLatch release) {
        Reports reports = instance.getBean(Reports.class);
        return once ? reports.write(period, written, release) : reports.writeWithoutOnce(period, written, release);
    }

    private int reports(String period) {
        return new JdbcTemplate(first.getBean(javax.sql.DataSource.class)).queryForObject(
                "SELECT COUNT(*) FROM once_app$report WHERE period = ?", Integer.class, period);
    }
}
