package dev.lease.fence.jpa;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.PostgresServer;

/** {@link PausedHolderJpaTest} on a real PostgreSQL. */
class PostgresPausedHolderJpaTest extends PausedHolderJpaTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    String jdbcUrl() {
        return postgres.jdbcUrl();
    }
}
