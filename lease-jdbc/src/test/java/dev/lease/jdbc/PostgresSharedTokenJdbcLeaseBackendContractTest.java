package dev.lease.jdbc;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.sql.SqlDialect;
import dev.lease.testing.PostgresServer;

/** Shared tokens on a real PostgreSQL server. */
class PostgresSharedTokenJdbcLeaseBackendContractTest extends SharedTokenJdbcLeaseBackendContractTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        // With deletion, so that the index on expires_at is created too; twice, since startup runs it every time.
        creatingSchema(postgres.dataSource()).createSchema();
        creatingSchema(postgres.dataSource()).createSchema();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return postgres.dataSource();
    }

    @Override
    protected DataSource secondDataSource() {
        return postgres.dataSource();
    }

    @Override
    protected String table() {
        return "lease_shared";
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.POSTGRESQL;
    }
}
