package dev.lease.fence;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.TestTiming;

/** {@link JdbcFence} on H2 (MVStore, row locks with a lock timeout well above the test's waits). */
class H2JdbcFenceTest extends JdbcFenceTest {

    private static JdbcDataSource dataSource;

    @BeforeAll
    static void createDatabase() {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:jdbc-fence;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT="
                + TestTiming.seconds(60).toMillis());
        dataSource.setUser("sa");
        createTables(dataSource);
    }

    @AfterAll
    static void dropDatabase() {
        new JdbcTemplate(dataSource).execute("DROP ALL OBJECTS");
    }

    @Override
    protected DataSource dataSource() {
        return dataSource;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        // A row lock wait shows a BLOCKER_ID; a wait on a unique key another transaction inserted does not, but the
        // session stays inside its statement on lease_fence.
        awaitTrue(() -> observer.queryForObject("SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS"
                + " WHERE SESSION_ID <> SESSION_ID() AND (BLOCKER_ID IS NOT NULL"
                + " OR LOWER(EXECUTING_STATEMENT) LIKE '%lease_fence%')", Integer.class) > 0);
    }
}
