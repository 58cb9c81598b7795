package dev.lease.fence.jpa;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.lease.testing.MariaDbServer;

/**
 * {@link JpaCollectionAndDeleteFenceTest} on a real MariaDB server (mariadbd), InnoDB in its default REPEATABLE READ.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJpaCollectionAndDeleteFenceTest extends JpaCollectionAndDeleteFenceTest {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("jpacollections");
    }

    @AfterAll
    static void stopMariaDb() {
        closeApplication();
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    String jdbcUrl() {
        return mariadb.jdbcUrl(mariadb.port());
    }
}
