package dev.lease.reactive;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * {@link ReactiveFenceAtGrantReentryTest} on a real PostgreSQL through r2dbc-postgresql: no lock timeout by default,
 * and no deadlock it can see (the two transactions wait on one reactive section), so the nested section hung for ever.
 */
class PostgresReactiveFenceAtGrantReentryTest extends ReactiveFenceAtGrantReentryTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private static ConnectionFactory connections;

    @BeforeAll
    static void connect() {
        connections = new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder().host("localhost")
                .port(POSTGRES.get().port()).username("postgres").database(POSTGRES.get().name()).build());
    }

    @Override
    protected ConnectionFactory connectionFactory() {
        return connections;
    }
}
