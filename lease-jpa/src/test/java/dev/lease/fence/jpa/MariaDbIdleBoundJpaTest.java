package dev.lease.fence.jpa;

import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/** {@link IdleBoundJpaTest} on a real MariaDB server (mariadbd): the session's wait_timeout. */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbIdleBoundJpaTest extends IdleBoundJpaTest {

    @RegisterExtension
    static final SharedDatabase<MariaDbDatabase> MARIADB = SharedDatabase.mariadb();

    @Override
    String jdbcUrl() {
        return MARIADB.get().jdbcUrl();
    }

    @Override
    String idleTimeoutSetting() {
        return "SELECT @@SESSION.wait_timeout";
    }

    @Override
    String oneSecond() {
        return "1";
    }

    @Override
    String sessionId() {
        return "SELECT CONNECTION_ID()";
    }
}
