package dev.lease.fence;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * {@link R2dbcFenceAtGrantTest} on a real PostgreSQL through r2dbc-postgresql: no lock timeout by default, so a fence
 * at grant waiting for a row lock waited for ever.
 */
class PostgresR2dbcFenceAtGrantTest extends R2dbcFenceAtGrantTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private static ConnectionFactory connections;

    @BeforeAll
    static void connect() {
        connections = R2dbcFencePostgresTest.connectionFactory(POSTGRES.get());
    }

    @Override
    protected ConnectionFactory connectionFactory() {
        return connections;
    }
}
