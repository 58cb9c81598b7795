package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.jdbc.JdbcLeaseBackend.Tokens;
import dev.lease.sql.SqlDialect;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * The contract suite as a PostgreSQL role with only the grants docs/security.md gives the lease user
 * ({@code initialize-schema: never}: the table is created by an administrator): SELECT, INSERT, UPDATE and DELETE on
 * {@code lease_lock}, nothing else. LISTEN/NOTIFY needs no grant.
 */
@ExtendWith(OutputCaptureExtension.class)
class PostgresLeastPrivilegeContractTest extends JdbcLeaseBackendContractTest {

    private static PostgresServer postgres;
    private static DataSource admin;
    private static DataSource leaser;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        admin = postgres.dataSource();
        JdbcTemplate superuser = new JdbcTemplate(admin);
        new JdbcLeaseBackend(admin).createSchema();
        superuser.execute("CREATE ROLE leaser LOGIN");
        superuser.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC");
        superuser.execute("GRANT USAGE ON SCHEMA public TO leaser");
        superuser.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON lease_lock TO leaser");
        leaser = postgres.dataSource(Map.of("user", "leaser"));
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return leaser;
    }

    @Override
    protected DataSource secondDataSource() {
        return leaser;
    }

    @Override
    protected DataSource adminDataSource() {
        return admin;
    }

    @Override
    protected void grantOnTestTable(String testTable) {
        new JdbcTemplate(admin).execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + testTable + " TO leaser");
    }

    @Override
    protected String table() {
        return JdbcLeaseBackend.DEFAULT_TABLE;
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.POSTGRESQL;
    }

    @Override
    protected int serverPort() {
        return postgres.port();
    }

    @Override
    protected SingleConnectionDataSource through(TcpProxy proxy) {
        return new SingleConnectionDataSource("jdbc:postgresql://" + proxy.address() + "/postgres", "leaser", "", true);
    }

    /** Without DELETE, idle rows stay: said once at WARN, naming the privilege, then quiet; leases still work. */
    @Test
    void withoutTheDeletePrivilegeIdleRowsStayAndThatIsSaidOnce(CapturedOutput output) throws Exception {
        JdbcTemplate superuser = new JdbcTemplate(admin);
        new JdbcLeaseBackend(admin, "lease_nodelete", Tokens.SHARED, Duration.ofHours(1)).createSchema();
        superuser.execute("GRANT SELECT, INSERT, UPDATE ON lease_nodelete TO leaser");
        JdbcLeaseBackend backend = new JdbcLeaseBackend(leaser, "lease_nodelete", Tokens.SHARED, Duration.ofMillis(1));
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
