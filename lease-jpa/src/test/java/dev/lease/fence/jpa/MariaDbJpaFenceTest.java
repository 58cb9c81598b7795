package dev.lease.fence.jpa;

import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/** {@link JpaFenceTest} on a real MariaDB server (mariadbd), InnoDB in its default REPEATABLE READ. */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJpaFenceTest extends JpaFenceTest {

    @RegisterExtension
    static final SharedDatabase<MariaDbDatabase> MARIADB = SharedDatabase.mariadb();

    @Override
    String jdbcUrl() {
        return MARIADB.get().jdbcUrl();
    }
}
