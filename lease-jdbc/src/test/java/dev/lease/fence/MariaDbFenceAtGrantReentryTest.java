package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.lease.testing.MariaDbServer;

/**
 * {@link FenceAtGrantReentryTest} on a real MariaDB server, whose InnoDB lock wait timeout (50 s by default, whole
 * seconds) fence at grant lowers to the lease's validity for its own statements only.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbFenceAtGrantReentryTest extends FenceAtGrantReentryTest {

    private static MariaDbServer mariadb;
    private static DataSource dataSource;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("fences");
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
}
