package dev.lease.once;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/** {@link JdbcOnceStore} on a real PostgreSQL server. */
class PostgresJdbcOnceStoreTest extends JdbcOnceStoreTest {

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
    protected void awaitABlockedSession(JdbcTemplate observer) {
        awaitTrue(() -> POSTGRES.get().lockWaits() > 0);
    }
}
