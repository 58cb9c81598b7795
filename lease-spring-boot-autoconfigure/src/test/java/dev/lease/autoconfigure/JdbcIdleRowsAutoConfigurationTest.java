package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;

/** {@code lease.jdbc.token} and {@code lease.jdbc.delete-idle-after}. */
class JdbcIdleRowsAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, JdbcLeaseConfiguration.class,
                    JdbcFenceAutoConfiguration.class, InMemoryLeaseConfiguration.class,
                    LeaseAutoConfiguration.class));

    @Test
    void deletingIdleRowsWithPerNameTokensFailsTheStartupNamingTheFix() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:idle-per-name;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.delete-idle-after=1h")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.jdbc.delete-idle-after")
                        .hasMessageContaining("set lease.jdbc.token: shared"));
    }

    /** The same check, in the same words, as for ZooKeeper's idle names. */
    @Test
    void aNonPositiveIdleTimeFailsTheStartup() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:idle-zero;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.token=shared", "lease.jdbc.delete-idle-after=0s")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.jdbc.delete-idle-after must be positive, not 0s")
                        .hasMessageContaining("remove it to keep idle rows"));
    }

    @Test
    void withSharedTokensAnIdleRowIsDeletedAndTheNameKeepsRisingTokens() {
        runner.withBean(DataSource.class, () -> h2("jdbc:h2:mem:idle-shared;DB_CLOSE_DELAY=-1"))
                .withPropertyValues("lease.jdbc.token=shared", "lease.jdbc.delete-idle-after=1s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LeaseTemplate leases = context.getBean(LeaseTemplate.class);
                    JdbcTemplate sql = new JdbcTemplate(context.getBean(DataSource.class));
                    LeaseSpec spec = LeaseSpec.of("invoice-7", LeaseKind.CORRECTNESS);
                    FencingToken first = leases.execute(spec, lease -> lease.token());
                    // Free for a minute on the database clock.
                    sql.update("UPDATE lease_lock SET expires_at = DATEADD(MINUTE, -1, CURRENT_TIMESTAMP) "
                            + "WHERE name = 'invoice-7'");
                    // Deleted by the backend's own thread, which sweeps once a second here.
                    await("idle row deleted").atMost(seconds(20)).until(() -> sql.queryForObject(
                            "SELECT COUNT(*) FROM lease_lock WHERE name = 'invoice-7'", Integer.class) == 0);
                    FencingToken second = leases.execute(spec, lease -> lease.token());
                    assertThat(second.isNewerThan(first)).isTrue();
                });
    }

    private static DataSource h2(String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        ds.setUser("sa");
        return ds;
    }
}
