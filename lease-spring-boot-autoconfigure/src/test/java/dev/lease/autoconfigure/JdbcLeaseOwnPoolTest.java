package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import com.zaxxer.hikari.HikariDataSource;

import dev.lease.Lease;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * {@code lease.jdbc.datasource.*}: lease bookkeeping on a small pool of its own keeps renewing while the application
 * has borrowed every connection of its pool, which without it turns into lost leases.
 */
class JdbcLeaseOwnPoolTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, JdbcLeaseConfiguration.class,
                    JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                    LeaseAutoConfiguration.class));

    @Test
    void withAPoolOfItsOwnNoLeaseIsLostWhileTheApplicationPoolIsExhausted() {
        String url = "jdbc:h2:mem:own-pool;DB_CLOSE_DELAY=-1";
        HikariDataSource[] own = new HikariDataSource[1];
        runner.withBean(DataSource.class, () -> applicationPool(url))
                .withPropertyValues("lease.jdbc.datasource.url=" + url, "lease.jdbc.datasource.username=sa",
                        "lease.jdbc.datasource.maximum-pool-size=2")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    own[0] = (HikariDataSource) context.getBean(LeaseBookkeepingPool.class).dataSource();
                    Duration ttl = seconds(1);
                    Lease lease = context.getBean(LeaseTemplate.class)
                            .acquire(LeaseSpec.of("own-pool", LeaseKind.CORRECTNESS).withTtl(ttl));
                    try (Exhausted busy = exhaust(context.getBean(DataSource.class))) {
                        // Several renewal intervals (ttl / 3) and three ttls while no application connection is free.
                        await().during(ttl.multipliedBy(3)).atMost(ttl.multipliedBy(3).plus(seconds(5)))
                                .pollInterval(millis(50)).until(lease::isValid);
                    }
                    lease.close();
                });
        assertThat(own[0].isClosed()).as("the pool of its own, closed with the context").isTrue();
    }

    /** The same load without a pool of its own: renewals wait for the application's pool and the lease is lost. */
    @Test
    void onTheApplicationPoolAnExhaustedPoolLosesTheLease() {
        String url = "jdbc:h2:mem:shared-pool;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> applicationPool(url)).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LeaseBookkeepingPool.class);
            Duration ttl = seconds(1);
            Lease lease = context.getBean(LeaseTemplate.class)
                    .acquire(LeaseSpec.of("shared-pool", LeaseKind.CORRECTNESS).withTtl(ttl));
            try (Exhausted busy = exhaust(context.getBean(DataSource.class))) {
                await().atMost(ttl.multipliedBy(3).plus(seconds(5))).pollInterval(millis(50))
                        .until(() -> !lease.isValid());
            }
            lease.close();
        });
    }

    @Test
    void aPoolSizeBelowOneFailsTheStartupNamingTheProperty() {
        runner.withBean(DataSource.class, () -> applicationPool("jdbc:h2:mem:bad-pool;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.datasource.url=jdbc:h2:mem:bad-pool;DB_CLOSE_DELAY=-1",
                        "lease.jdbc.datasource.maximum-pool-size=0")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.jdbc.datasource.maximum-pool-size"));
    }

    @Test
    void theBackendRunsOnThePoolOfItsOwn() {
        String url = "jdbc:h2:mem:which-pool;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> applicationPool(url))
                .withPropertyValues("lease.jdbc.datasource.url=" + url, "lease.jdbc.datasource.username=sa")
                .run(context -> assertThat(context.getBean(JdbcLeaseBackend.class)).extracting("dataSource")
                        .isSameAs(context.getBean(LeaseBookkeepingPool.class).dataSource()));
    }

    /** No application DataSource at all: the pool of its own is what makes the JDBC backend available. */
    @Test
    void withoutAnApplicationDataSourceTheBackendRunsOnThePoolOfItsOwn() {
        String url = "jdbc:h2:mem:no-app-datasource;DB_CLOSE_DELAY=-1";
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(JdbcLeaseConfiguration.class,
                        JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                        LeaseAutoConfiguration.class))
                .withPropertyValues("lease.jdbc.datasource.url=" + url, "lease.jdbc.datasource.username=sa")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(DataSource.class);
                    assertThat(context.getBean(JdbcLeaseBackend.class)).extracting("dataSource")
                            .isSameAs(context.getBean(LeaseBookkeepingPool.class).dataSource());
                    acquireAndRelease(context.getBean(LeaseTemplate.class), "no-app-datasource");
                });
    }

    /** Several application DataSources, none of them primary: the pool of its own still serves the backend. */
    @Test
    void withSeveralApplicationDataSourcesTheBackendRunsOnThePoolOfItsOwn() {
        String url = "jdbc:h2:mem:several-datasources;DB_CLOSE_DELAY=-1";
        runner.withBean("orders", DataSource.class, () -> applicationPool("jdbc:h2:mem:orders;DB_CLOSE_DELAY=-1"))
                .withBean("billing", DataSource.class, () -> applicationPool("jdbc:h2:mem:billing;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.backend=jdbc", "lease.jdbc.datasource.url=" + url,
                        "lease.jdbc.datasource.username=sa")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(JdbcLeaseBackend.class)).extracting("dataSource")
                            .isSameAs(context.getBean(LeaseBookkeepingPool.class).dataSource());
                    acquireAndRelease(context.getBean(LeaseTemplate.class), "several-datasources");
                });
    }

    /** The application's own backend: the pool would go unused, so it is not built. */
    @Test
    void withABackendOfTheApplicationsOwnNoPoolIsBuilt() {
        String url = "jdbc:h2:mem:own-backend;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> applicationPool(url))
                .withBean(JdbcLeaseBackend.class, () -> {
                    JdbcLeaseBackend backend = new JdbcLeaseBackend(applicationPool(url));
                    backend.createSchema();
                    return backend;
                })
                .withPropertyValues("lease.jdbc.datasource.url=" + url, "lease.jdbc.datasource.username=sa")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseBackend.class)
                        .doesNotHaveBean(LeaseBookkeepingPool.class));
    }

    private static void acquireAndRelease(LeaseTemplate leases, String name) {
        Lease lease = leases.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(30)));
        assertThat(lease.isValid()).isTrue();
        lease.close();
    }

    /** An application pool of two connections that gives up waiting for one after 250 ms, Hikari's minimum. */
    private static HikariDataSource applicationPool(String url) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(url);
        pool.setUsername("sa");
        pool.setMaximumPoolSize(2);
        pool.setConnectionTimeout(250);
        pool.setPoolName("application");
        return pool;
    }

    /** Borrows every connection of the application's pool and holds them until closed. */
    private static Exhausted exhaust(DataSource application) throws Exception {
        List<Connection> held = new ArrayList<>();
        for (int i = 0; i < ((HikariDataSource) application).getMaximumPoolSize(); i++) {
            held.add(application.getConnection());
        }
        return new Exhausted(held);
    }

    private record Exhausted(List<Connection> held) implements AutoCloseable {

        @Override
        public void close() throws Exception {
            for (Connection c : held) {
                c.close();
            }
        }
    }
}
