package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.MariaDbServer;

/**
 * The fence tests as the lease user of docs/security.md, with {@code lease.fence.initialize-schema: never}: an
 * administrator created the tables; the user has SELECT, INSERT and UPDATE on {@code lease_fence} (and what the
 * application needs on its own tables), no DDL, no DELETE.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbLeastPrivilegeJdbcFenceTest extends JdbcFenceTest {

    private static MariaDbServer mariadb;
    private static DataSource leaser;

    @BeforeAll
    static void start() throws Exception {
        mariadb = MariaDbServer.start("fence");
        DataSource admin = mariadb.dataSource();
        createTables(admin);
        JdbcTemplate root = new JdbcTemplate(admin);
        root.execute("CREATE USER 'leaser'@'%' IDENTIFIED BY 'leaser-pw'");
        root.execute("GRANT SELECT, INSERT, UPDATE ON fence.lease_fence TO 'leaser'@'%'");
        root.execute("GRANT SELECT, INSERT, UPDATE ON fence.account TO 'leaser'@'%'");
        root.execute("GRANT SELECT, INSERT, UPDATE ON fence.coded TO 'leaser'@'%'");
        // The lock-wait observer reads information_schema.INNODB_TRX, which needs PROCESS: a test's need only.
        root.execute("GRANT PROCESS ON *.* TO 'leaser'@'%'");
        leaser = mariadb.dataSourceAs("leaser", "leaser-pw");
    }

    @AfterAll
    static void stop() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return leaser;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> observer.queryForObject(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'",
                Integer.class) > 0);
    }
}
