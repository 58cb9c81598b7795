package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/**
 * {@link FenceAtGrantReentryTest} on a real MariaDB server, whose InnoDB lock wait timeout (50 s by default, whole
 * seconds) fence at grant lowers to the lease's validity for its own statements only.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbFenceAtGrantReentryTest extends FenceAtGrantReentryTest {

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
}
