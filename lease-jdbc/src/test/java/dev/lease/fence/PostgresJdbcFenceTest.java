package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/** {@link JdbcFence} on a real PostgreSQL server. */
class PostgresJdbcFenceTest extends JdbcFenceTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @BeforeAll
    static void createTables() {
        createTables(POSTGRES.get().dataSource());
    }

    @Override
    protected DataSource dataSource() {
        return POSTGRES.get().dataSource();
    }

    @Override
    protected String idleTimeoutSetting() {
        return "SELECT current_setting('idle_in_transaction_session_timeout')";
    }

    @Override
    protected String idleTimeoutShown(int seconds) {
        return seconds + "s";
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> POSTGRES.get().lockWaits() > 0);
    }
}
