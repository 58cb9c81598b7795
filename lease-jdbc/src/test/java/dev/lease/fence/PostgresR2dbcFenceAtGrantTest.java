package dev.lease.fence;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.PostgresServer;

/**
 * {@link R2dbcFenceAtGrantTest} on a real PostgreSQL through r2dbc-postgresql: no lock timeout by default, so a fence
 * at grant waiting for a row lock waited for ever.
 */
class PostgresR2dbcFenceAtGrantTest extends R2dbcFenceAtGrantTest {

    private static PostgresServer postgres;
    private static ConnectionFactory connections;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        connections = R2dbcFencePostgresTest.connectionFactory(postgres.port());
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected ConnectionFactory connectionFactory() {
        return connections;
    }
}
