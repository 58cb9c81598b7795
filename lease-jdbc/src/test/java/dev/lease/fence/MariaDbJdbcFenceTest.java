package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/** {@link JdbcFence} on a real MariaDB server (the MySQL script), with both ways the driver can count rows. */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJdbcFenceTest extends JdbcFenceTest {

    @RegisterExtension
    static final SharedDatabase<MariaDbDatabase> MARIADB = SharedDatabase.mariadb();

    /** One DataSource object per setting: transactions are bound to it, a second instance would not join them. */
    private static DataSource countingChangedRows;

    @BeforeAll
    static void createTables() {
        countingChangedRows = MARIADB.get().dataSource("useAffectedRows=true");
        createTables(MARIADB.get().dataSource());
    }

    @Override
    protected DataSource dataSource() {
        return MARIADB.get().dataSource();
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> MARIADB.get().lockWaits() > 0);
    }

    @Override
    protected String idleTimeoutSetting() {
        return IDLE_TIMEOUT;
    }

    /** The session's wait_timeout, which the fence sets for its transactions. */
    static final String IDLE_TIMEOUT = "SELECT @@SESSION.wait_timeout";

    /** The same tests where an UPDATE that changes no value reports 0 rows, however many rows it matched. */
    @Nested
    class WithUseAffectedRows extends JdbcFenceTest {

        @Override
        protected DataSource dataSource() {
            return countingChangedRows;
        }

        @Override
        protected void awaitABlockedSession(JdbcTemplate observer) {
            awaitTrue(() -> MARIADB.get().lockWaits() > 0);
        }

        @Override
        protected String idleTimeoutSetting() {
            return IDLE_TIMEOUT;
        }
    }
}
