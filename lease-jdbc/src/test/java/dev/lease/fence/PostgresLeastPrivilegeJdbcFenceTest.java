package dev.lease.fence;

import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.PostgresServer;

/**
 * The fence tests as the lease user of docs/security.md, with {@code lease.fence.initialize-schema: never}: an
 * administrator created the tables; the user has SELECT, INSERT and UPDATE on {@code lease_fence} (and what the
 * application needs on its own tables), no DDL, no DELETE.
 */
class PostgresLeastPrivilegeJdbcFenceTest extends JdbcFenceTest {

    private static PostgresServer postgres;
    private static DataSource leaser;

    @BeforeAll
    static void start() throws Exception {
        postgres = PostgresServer.start();
        DataSource admin = postgres.dataSource();
        createTables(admin);
        JdbcTemplate superuser = new JdbcTemplate(admin);
        superuser.execute("CREATE ROLE leaser LOGIN");
        superuser.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC");
        superuser.execute("GRANT USAGE ON SCHEMA public TO leaser");
        superuser.execute("GRANT SELECT, INSERT, UPDATE ON lease_fence TO leaser");
        superuser.execute("GRANT SELECT, INSERT, UPDATE ON account, coded TO leaser");
        leaser = postgres.dataSource(Map.of("user", "leaser"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return leaser;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> observer.queryForObject(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", Integer.class) > 0);
    }
}
