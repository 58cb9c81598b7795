package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.MariaDbServer;

/** {@link JdbcFence} on a real MariaDB server (the MySQL script), with both ways the driver can count rows. */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJdbcFenceTest extends JdbcFenceTest {

    private static MariaDbServer mariadb;

    /** One DataSource object per setting: transactions are bound to it, a second instance would not join them. */
    private static DataSource dataSource;
    private static DataSource countingChangedRows;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("fence");
        dataSource = mariadb.dataSource();
        countingChangedRows = mariadb.dataSource("useAffectedRows=true");
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
        awaitLockWait(observer);
    }

    private static void awaitLockWait(JdbcTemplate observer) {
        awaitTrue(() -> observer.queryForObject(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'", Integer.class) > 0);
    }

    /** The same tests where an UPDATE that changes no value reports 0 rows, however many rows it matched. */
    @Nested
    class WithUseAffectedRows extends JdbcFenceTest {

        @Override
        protected DataSource dataSource() {
            return countingChangedRows;
        }

        @Override
        protected void awaitABlockedSession(JdbcTemplate observer) {
            awaitLockWait(observer);
        }
    }
}
