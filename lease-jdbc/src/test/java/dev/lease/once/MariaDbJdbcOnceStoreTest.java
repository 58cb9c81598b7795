package dev.lease.once;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.MariaDbServer;

/** {@link JdbcOnceStore} on a real MariaDB server (the MySQL script). */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJdbcOnceStoreTest extends JdbcOnceStoreTest {

    private static MariaDbServer mariadb;

    /** One DataSource object: transactions are bound to it, a second instance would not join them. */
    private static DataSource dataSource;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("once");
        dataSource = mariadb.dataSource();
        createTables(dataSource);
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return dataSource;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> observer.queryForObject(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'", Integer.class) > 0);
    }
}
