package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import com.zaxxer.hikari.HikariDataSource;

import dev.lease.Lease;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * {@code lease.jdbc.datasource.*}: lease bookkeeping on a small pool of its own, by default a copy of the application's,
 * keeps renewing while the application has borrowed every connection of its pool, which without it turns into lost
 * leases; what is copied, what is shared and what is said about it.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcLeaseOwnPoolTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, JdbcLeaseConfiguration.class,
                    JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                    LeaseAutoConfiguration.class));

    @Test
    void withAPoolOfItsOwnNoLeaseIsLostWhileTheApplicationPoolIsExhausted() {
        String url = "jdbc:h2:mem:own-pool;DB_CLOSE_DELAY=-1";
        noLeaseIsLostWhileTheApplicationPoolIsExhausted(runner.withBean(DataSource.class, () -> applicationPool(url))
                .withPropertyValues("lease.jdbc.datasource.url=" + url, "lease.jdbc.datasource.username=sa",
                        "lease.jdbc.datasource.maximum-pool-size=2"));
    }

    /** Issue 32: the default is a pool of its own, a copy of the application's. */
    @Test
    void byDefaultNoLeaseIsLostWhileTheApplicationPoolIsExhausted() {
        String url = "jdbc:h2:mem:default-pool;DB_CLOSE_DELAY=-1";
        noLeaseIsLostWhileTheApplicationPoolIsExhausted(runner.withBean(DataSource.class, () -> applicationPool(url)));
    }

    private static void noLeaseIsLostWhileTheApplicationPoolIsExhausted(ApplicationContextRunner runner) {
        HikariDataSource[] own = new HikariDataSource[1];
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            own[0] = (HikariDataSource) context.getBean(LeaseBookkeepingPool.class).target();
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

    /**
     * The same load on the application's pool, shared on purpose: renewals wait for the application's pool and the
     * lease is lost, and the loss names the application's pool and the setting that gives leases a pool of their own.
     */
    @Test
    void onTheApplicationPoolAnExhaustedPoolLosesTheLeaseNamingThePoolAndTheSetting() {
        String url = "jdbc:h2:mem:shared-pool;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> applicationPool(url))
                .withPropertyValues("lease.jdbc.datasource.pool=application").run(context -> {
                    assertThat(context).hasNotFailed();
                    LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
                    assertThat(pool.own()).isFalse();
                    assertThat(pool.target()).isSameAs(context.getBean(DataSource.class));
                    Duration ttl = seconds(1);
                    Lease lease = context.getBean(LeaseTemplate.class)
                            .acquire(LeaseSpec.of("shared-pool", LeaseKind.CORRECTNESS).withTtl(ttl));
                    try (Exhausted busy = exhaust(context.getBean(DataSource.class))) {
                        await().atMost(ttl.multipliedBy(3).plus(seconds(5))).pollInterval(millis(50))
                                .until(() -> !lease.isValid());
                        assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class)
                                .hasMessageContaining("the application's pool 'application'")
                                .hasMessageContaining("remove lease.jdbc.datasource.pool");
                    }
                    lease.close();
                });
    }

    /**
     * The copy keeps what the application configured (URL, login, initial SQL, schema) and takes the lease backend's
     * own name, size and wait.
     */
    @Test
    void theDefaultPoolIsACopyOfTheApplicationsHikariSettings() {
        String url = "jdbc:h2:mem:copied-pool;DB_CLOSE_DELAY=-1";
        HikariDataSource application = applicationPool(url);
        application.setConnectionInitSql("SET @COPIED = 1");
        application.setSchema("PUBLIC");
        runner.withBean(DataSource.class, () -> application).withPropertyValues(
                "lease.jdbc.datasource.maximum-pool-size=3", "lease.jdbc.datasource.connection-timeout=300ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
                    assertThat(pool.own()).isTrue();
                    assertThat(pool.settings()).isEqualTo("spring.datasource");
                    assertThat(pool.target()).isInstanceOfSatisfying(HikariDataSource.class, copy -> {
                        assertThat(copy).isNotSameAs(application);
                        assertThat(copy.getPoolName()).isEqualTo("lease-bookkeeping");
                        assertThat(copy.getJdbcUrl()).isEqualTo(url);
                        assertThat(copy.getUsername()).isEqualTo("sa");
                        assertThat(copy.getConnectionInitSql()).isEqualTo("SET @COPIED = 1");
                        assertThat(copy.getSchema()).isEqualTo("PUBLIC");
                        assertThat(copy.getMaximumPoolSize()).isEqualTo(3);
                        assertThat(copy.getMinimumIdle()).isEqualTo(3);
                        assertThat(copy.getConnectionTimeout()).isEqualTo(300);
                        assertThat(copy.getValidationTimeout()).isLessThanOrEqualTo(300);
                        assertThat(copy.isAutoCommit()).isTrue();
                    });
                    acquireAndRelease(context.getBean(LeaseTemplate.class), "copied-pool");
                });
    }

    /** A pool Spring Boot reads the URL and login of, but no HikariCP one: its settings in a pool of its own. */
    @Test
    void anotherPoolsUrlAndLoginMakeThePoolOfItsOwn() {
        String url = "jdbc:h2:mem:other-pool;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> new OtherPool(url)).run(context -> {
            assertThat(context).hasNotFailed();
            LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
            assertThat(pool.own()).isTrue();
            assertThat(pool.target()).isInstanceOfSatisfying(HikariDataSource.class, copy -> {
                assertThat(copy.getJdbcUrl()).isEqualTo(url);
                assertThat(copy.getUsername()).isEqualTo("sa");
            });
            acquireAndRelease(context.getBean(LeaseTemplate.class), "other-pool");
        });
    }

    /** No pool to run dry: each call opens a connection of its own, so the DataSource serves as it is. */
    @Test
    void aDataSourceThatOpensAConnectionPerCallIsUsedAsItIs(CapturedOutput output) {
        EmbeddedDatabase embedded = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
                .generateUniqueName(true).build();
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:connection-per-call;DB_CLOSE_DELAY=-1");
        for (DataSource application : new DataSource[] {embedded, h2}) {
            runner.withBean(DataSource.class, () -> application).run(context -> {
                assertThat(context).hasNotFailed();
                LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
                assertThat(pool.own()).isFalse();
                assertThat(pool.target()).isSameAs(application);
                acquireAndRelease(context.getBean(LeaseTemplate.class), "connection-per-call");
            });
        }
        embedded.shutdown();
        assertThat(output).doesNotContain("cannot be copied");
    }

    /** One that cannot be copied is shared, with one WARN naming the risk and the setting. */
    @Test
    void aDataSourceThatCannotBeCopiedIsSharedWithAWarning(CapturedOutput output) {
        DataSource application = new Uncopyable(applicationPool("jdbc:h2:mem:uncopyable;DB_CLOSE_DELAY=-1"));
        runner.withBean(DataSource.class, () -> application).run(context -> {
            assertThat(context).hasNotFailed();
            LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
            assertThat(pool.own()).isFalse();
            assertThat(pool.target()).isSameAs(application);
            acquireAndRelease(context.getBean(LeaseTemplate.class), "uncopyable");
        });
        assertThat(output).containsOnlyOnce("WARN").contains("cannot be copied into a pool of its own")
                .contains("leases are lost").contains("Set lease.jdbc.datasource.url");
    }

    /** Shared on purpose: said at INFO, no warning; a transaction-aware proxy stands for its target. */
    @Test
    void sharingOnPurposeUsesTheApplicationsDataSourceWithoutAWarning(CapturedOutput output) {
        HikariDataSource target = applicationPool("jdbc:h2:mem:on-purpose;DB_CLOSE_DELAY=-1");
        runner.withBean(DataSource.class, () -> new TransactionAwareDataSourceProxy(target))
                .withPropertyValues("lease.jdbc.datasource.pool=application").run(context -> {
                    assertThat(context).hasNotFailed();
                    LeaseBookkeepingPool pool = context.getBean(LeaseBookkeepingPool.class);
                    assertThat(pool.own()).isFalse();
                    assertThat(pool.target()).isSameAs(target);
                });
        assertThat(output).contains("shared on purpose").doesNotContain("WARN");
        target.close();
    }

    @Test
    void sharingOnPurposeAndAUrlAreRefusedTogether() {
        runner.withBean(DataSource.class, () -> applicationPool("jdbc:h2:mem:both;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.datasource.pool=application",
                        "lease.jdbc.datasource.url=jdbc:h2:mem:both;DB_CLOSE_DELAY=-1")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.jdbc.datasource.url is set, but lease.jdbc.datasource.pool is "
                                + "'application'"));
    }

    @Test
    void aConnectionTimeoutBelowHikarisMinimumIsRefused() {
        runner.withBean(DataSource.class, () -> applicationPool("jdbc:h2:mem:short-wait;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.datasource.connection-timeout=100ms")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.jdbc.datasource.connection-timeout is 100ms")
                        .hasMessageContaining("250ms"));
    }

    /** Neither the application's password nor the pool of its own's is written to the log. */
    @Test
    void noPasswordIsLogged(CapturedOutput output) {
        String url = "jdbc:h2:mem:password;DB_CLOSE_DELAY=-1";
        runner.withBean(DataSource.class, () -> {
            HikariDataSource application = applicationPool(url);
            application.setPassword("app-s3cret");
            return application;
        }).run(context -> assertThat(context).hasNotFailed());
        runner.withBean(DataSource.class, () -> applicationPool("jdbc:h2:mem:no-password;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.datasource.url=jdbc:h2:mem:password-of-its-own;DB_CLOSE_DELAY=-1;"
                        + "USER=sa;PASSWORD=url-s3cret")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("Lease bookkeeping takes its connections from").doesNotContain("s3cret");
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

    /**
     * A pool of another kind, as Spring Boot's {@code DataSourceBuilder} reads one it has no mapping for: by its
     * {@code getUrl}, {@code getUsername} and {@code getPassword}.
     */
    public static final class OtherPool extends AbstractDataSource {

        private final String url;

        OtherPool(String url) {
            this.url = url;
        }

        public String getUrl() {
            return url;
        }

        public String getUsername() {
            return "sa";
        }

        public String getPassword() {
            return "";
        }

        @Override
        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url, "sa", "");
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return DriverManager.getConnection(url, username, password);
        }
    }

    /** A DataSource that tells nothing of its settings and does not let itself be unwrapped. */
    private static final class Uncopyable extends AbstractDataSource {

        private final DataSource target;

        Uncopyable(DataSource target) {
            this.target = target;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return target.getConnection();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return target.getConnection(username, password);
        }
    }
}
