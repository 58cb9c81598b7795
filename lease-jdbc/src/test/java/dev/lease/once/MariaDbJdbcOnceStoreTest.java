package dev.lease.once;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/** {@link JdbcOnceStore} on a real MariaDB server (the MySQL script). */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJdbcOnceStoreTest extends JdbcOnceStoreTest {

    @RegisterExtension
    static final SharedDatabase<MariaDbDatabase> MARIADB = SharedDatabase.mariadb();

    @BeforeAll
    static void createTables() {
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
}
