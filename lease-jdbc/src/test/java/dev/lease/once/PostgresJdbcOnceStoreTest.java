package dev.lease.once;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.PostgresServer;

/** {@link JdbcOnceStore} on a real PostgreSQL server. */
class PostgresJdbcOnceStoreTest extends JdbcOnceStoreTest {

    private static PostgresServer postgres;

    /** One DataSource object: transactions are bound to it, a second instance would not join them. */
    private static DataSource dataSource;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        dataSource = postgres.dataSource();
        createTables(dataSource);
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return dataSource;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> observer.queryForObject(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", Integer.class) > 0);
    }
}
