package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.jdbc.JdbcLeaseBackend.Tokens;

/**
 * The contract suite as a PostgreSQL role and as a MariaDB user with only the grants docs/security.md gives the lease
 * user ({@code initialize-schema: never}: the table is created by an administrator): SELECT, INSERT, UPDATE and DELETE
 * on {@code lease_lock}, nothing else.
 */
@EnumSource(value = JdbcVariant.class, names = {"POSTGRESQL_LEAST_PRIVILEGE", "MARIADB_LEAST_PRIVILEGE"})
class JdbcLeastPrivilegeContractTest extends JdbcLeaseBackendContract {

    /** Without DELETE, idle rows stay: said once at WARN, naming the privilege, then quiet; leases still work. */
    @Test
    @OnlyOn(JdbcVariant.POSTGRESQL_LEAST_PRIVILEGE)
    @ExtendWith(OutputCaptureExtension.class)
    void withoutTheDeletePrivilegeIdleRowsStayAndThatIsSaidOnce(CapturedOutput output) throws Exception {
        JdbcTemplate superuser = new JdbcTemplate(adminDataSource());
        new JdbcLeaseBackend(adminDataSource(), "lease_nodelete", Tokens.SHARED, Duration.ofHours(1)).createSchema();
        superuser.execute("GRANT SELECT, INSERT, UPDATE ON lease_nodelete TO leaser");
        JdbcLeaseBackend backend = new JdbcLeaseBackend(dataSource(), "lease_nodelete", Tokens.SHARED,
                Duration.ofMillis(1));
        backend.sweepEvery(Duration.ofHours(1));
        try {
            backend.release(grant(backend, uniqueName(), seconds(30)).orElseThrow());
            for (int i = 0; i < 3; i++) {
                backend.sweepOnce();
            }
            String warning = "Idle lease rows of lease_nodelete cannot be deleted: the database user lacks the DELETE "
                    + "privilege";
            assertThat(output.getOut() + output.getErr()).containsOnlyOnce(warning)
                    .contains("GRANT DELETE ON lease_nodelete");
            assertThat(superuser.queryForObject("SELECT COUNT(*) FROM lease_nodelete WHERE owner IS NULL",
                    Integer.class)).as("the idle row stays").isPositive();
            backend.release(grant(backend, uniqueName(), seconds(30)).orElseThrow());
        }
        finally {
            backend.close();
        }
    }
}
