package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.core.BackendRouter;
import dev.lease.LeaseConfigurationException;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.memory.InMemoryLeaseBackend;

class JdbcAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, JdbcLeaseConfiguration.class,
                    JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                    LeaseAutoConfiguration.class));

    @Test
    void anEmbeddedDatabaseGetsBothTablesAndServesFencedLeases() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-embedded;DB_CLOSE_DELAY=-1")).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseBackend.class).hasSingleBean(JdbcFence.class);
            assertThat(context.getBean(BackendRouter.class).backendFor(LeaseKind.CORRECTNESS).id()).isEqualTo("jdbc");
            LeaseTemplate leases = context.getBean(LeaseTemplate.class);
            JdbcFence fence = context.getBean(JdbcFence.class);
            TransactionTemplate tx = new TransactionTemplate(
                    new DataSourceTransactionManager(context.getBean(DataSource.class)));
            FencingToken first = leases.execute(LeaseSpec.of("auto-jdbc", LeaseKind.CORRECTNESS), lease -> {
                tx.executeWithoutResult(s -> fence.advance("report", lease.token()));
                return lease.token();
            });
            FencingToken second = leases.execute(LeaseSpec.of("auto-jdbc", LeaseKind.CORRECTNESS), lease -> {
                tx.executeWithoutResult(s -> fence.advance("report", lease.token()));
                return lease.token();
            });
            assertThat(second.isNewerThan(first)).isTrue();
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> tx.executeWithoutResult(s -> fence.advance("report", first)))
                    .isInstanceOf(StaleTokenException.class);
        });
    }

    @Test
    void theFenceUsesTheApplicationsJdbcTemplate() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-template;DB_CLOSE_DELAY=-1")).run(context ->
                assertThat(context.getBean(JdbcFence.class)).extracting("jdbc")
                        .isSameAs(context.getBean(JdbcTemplate.class)));
    }

    @Test
    void aDatabaseThatIsNotEmbeddedGetsNoTablesUnlessAskedAndAMissingTableFailsTheStartup(@TempDir Path dir) {
        String url = "jdbc:h2:file:" + dir.resolve("leases").toAbsolutePath();
        DataSource db = h2(url);
        runner.withBean(DataSource.class, () -> db).withBean(LeaseTaker.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("cannot read its table 'lease_lock'")
                    .hasMessageContaining("lease.jdbc.initialize-schema: always");
        });
        assertThat(tables(db)).doesNotContain("LEASE_LOCK", "LEASE_FENCE");
        runner.withBean(DataSource.class, () -> db)
                .withPropertyValues("lease.jdbc.initialize-schema=always", "lease.fence.initialize-schema=always")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(tables(db)).contains("LEASE_LOCK", "LEASE_FENCE");
                });
    }

    @Test
    void aNegativeFenceIdleTimeoutFailsTheStartupNamingTheProperty() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:idle-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.initialize-schema=always", "lease.fence.initialize-schema=always",
                        "lease.fence.idle-timeout=-1s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .hasMessageContaining("lease.fence.idle-timeout").hasMessageContaining("-1S");
                });
    }

    /** Whether or not the starter was asked to create its table, the cause named is the connection, not the table. */
    @Test
    void anUnreachableDatabaseFailsTheStartupNamingItsAddress() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String url = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:unreachable";
        for (String schema : new String[] {"embedded", "always"}) {
            runner.withBean(DataSource.class, () -> h2(url)).withBean(LeaseTaker.class)
                    .withPropertyValues("lease.jdbc.initialize-schema=" + schema)
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                                .isInstanceOf(LeaseConfigurationException.class)
                                .hasMessageContaining("cannot connect to its database " + url)
                                .hasMessageContaining("spring.datasource.")
                                .hasMessageNotContaining("create the table");
                    });
        }
    }

    /** The URL is printed to help, and logged at ERROR by Boot: never with the credentials it may carry. */
    @Test
    void anUnreachableDatabaseIsNamedWithoutItsCredentials() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String url = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:unreachable;USER=leaser;PASSWORD=s3cret";
        runner.withBean(DataSource.class, () -> h2(url)).withBean(LeaseTaker.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("cannot connect to its database jdbc:h2:tcp://127.0.0.1:" + port
                            + "/mem:unreachable;USER=leaser;PASSWORD=***")
                    .hasMessageNotContaining("s3cret");
        });
        String own = "jdbc:h2:tcp://leaser:s3cret@127.0.0.1:" + port + "/mem:unreachable;PASSWORD=s3cret";
        runner.withBean(LeaseTaker.class).withPropertyValues("lease.backend=jdbc", "lease.jdbc.datasource.url=" + own)
                .run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("lease.jdbc.datasource")
                    .hasMessageNotContaining("s3cret");
        });
    }

    /** Issue 44: a service that only checks tokens takes no leases, so it needs neither the table nor the database. */
    @Test
    void nothingThatTakesLeasesNeedsNoLeaseTableNorAReachableStore() throws Exception {
        DataSource db = h2("jdbc:h2:mem:auto-no-takers;DB_CLOSE_DELAY=-1");
        runner.withBean(DataSource.class, () -> db).withPropertyValues("lease.jdbc.initialize-schema=never")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseBackend.class));
        assertThat(tables(db)).doesNotContain("LEASE_LOCK");
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String unreachable = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:unreachable";
        runner.withBean(DataSource.class, () -> db).withPropertyValues("lease.backend=jdbc",
                "lease.jdbc.datasource.url=" + unreachable).run(context -> assertThat(context).hasNotFailed());
    }

    /** Takes leases through an injected template, which is what makes the startup check the lease store. */
    static final class LeaseTaker {

        LeaseTaker(LeaseTemplate leases) {
        }
    }

    @Test
    void neverMeansNeverEvenOnAnEmbeddedDatabase() {
        DataSource db = h2("jdbc:h2:mem:auto-never;DB_CLOSE_DELAY=-1");
        runner.withBean(DataSource.class, () -> db).withBean(LeaseTaker.class)
                .withPropertyValues("lease.jdbc.initialize-schema=never", "lease.fence.initialize-schema=never")
                .run(context -> assertThat(context).hasFailed());
        assertThat(tables(db)).doesNotContain("LEASE_LOCK", "LEASE_FENCE");
    }

    @Test
    void aCustomTableIsCreatedAndUsed() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-custom;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.table=app_leases").run(context -> {
                    assertThat(context.getBean(JdbcLeaseBackend.class).table()).isEqualTo("app_leases");
                    context.getBean(LeaseTemplate.class).execute(LeaseSpec.of("custom", LeaseKind.CORRECTNESS),
                            lease -> null);
                    assertThat(new JdbcTemplate(context.getBean(DataSource.class))
                            .queryForObject("SELECT token FROM app_leases WHERE name = 'custom'", Long.class))
                            .isEqualTo(1);
                });
    }

    @Test
    void anInvalidTableNameFailsTheStartupSayingWhatIsAccepted() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-invalid;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.table=lease_lock; DROP TABLE account").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("lease.jdbc.table")
                            .hasMessageContaining("lease_lock; DROP TABLE account");
                });
    }

    @Test
    void staysAwayWhenLeasesAreRoutedToAnotherBackend() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-elsewhere;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.backend=in-memory").run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(JdbcLeaseBackend.class)
                            .hasSingleBean(InMemoryLeaseBackend.class);
                    assertThat(tables(context.getBean(DataSource.class))).doesNotContain("LEASE_LOCK");
                });
    }

    @Test
    void backsOffForAnApplicationsOwnBackendAndWithoutADataSource() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:auto-own;DB_CLOSE_DELAY=-1"))
                .withBean("myLeases", JdbcLeaseBackend.class,
                        () -> new JdbcLeaseBackend(h2("jdbc:h2:mem:auto-own;DB_CLOSE_DELAY=-1"), "my_leases"))
                .run(context -> assertThat(context.getBean(JdbcLeaseBackend.class).table()).isEqualTo("my_leases"));
        // Without DataSourceAutoConfiguration, which would otherwise create an embedded H2 from the test classpath.
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(JdbcLeaseConfiguration.class,
                        JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                        LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory").run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(JdbcLeaseBackend.class).doesNotHaveBean(JdbcFence.class));
    }

    private static List<String> tables(DataSource dataSource) {
        return new JdbcTemplate(dataSource).queryForList(
                "SELECT UPPER(TABLE_NAME) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'", String.class);
    }

    private static DataSource h2(String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        ds.setUser("sa");
        return ds;
    }
}
