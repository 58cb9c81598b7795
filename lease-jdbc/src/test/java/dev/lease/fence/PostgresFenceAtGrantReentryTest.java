package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.PostgresServer;

/**
 * {@link FenceAtGrantReentryTest} on a real PostgreSQL server, which has no lock timeout by default and cannot see a
 * wait between two of its sessions that one thread holds: the self-deadlock there lasted for ever.
 */
class PostgresFenceAtGrantReentryTest extends FenceAtGrantReentryTest {

    private static PostgresServer postgres;
    private static DataSource dataSource;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        dataSource = postgres.dataSource();
        createTables(dataSource);
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return dataSource;
    }
}
