package dev.lease.fence.jpa;

import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/** {@link PausedHolderJpaTest} on a real PostgreSQL. */
class PostgresPausedHolderJpaTest extends PausedHolderJpaTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @Override
    String jdbcUrl() {
        return POSTGRES.get().jdbcUrl();
    }
}
