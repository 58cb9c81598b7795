package dev.lease.fence.jpa;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.lease.testing.MariaDbServer;

/** {@link PausedHolderJpaTest} on a real MariaDB server. */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbPausedHolderJpaTest extends PausedHolderJpaTest {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("paused");
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    String jdbcUrl() {
        return mariadb.jdbcUrl(mariadb.port());
    }
}
