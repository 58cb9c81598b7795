package dev.lease.reactive;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.PostgresServer;

/**
 * {@link ReactiveFenceAtGrantReentryTest} on a real PostgreSQL through r2dbc-postgresql: no lock timeout by default,
 * and no deadlock it can see (the two transactions wait on one reactive section), so the nested section hung for ever.
 */
class PostgresReactiveFenceAtGrantReentryTest extends ReactiveFenceAtGrantReentryTest {

    private static PostgresServer postgres;
    private static ConnectionFactory connections;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        connections = new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder().host("localhost")
                .port(postgres.port()).username("postgres").database("postgres").build());
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
