package dev.lease.jdbc;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/** The JDBC backend on a real PostgreSQL server; two DataSources stand for two application instances. */
class PostgresJdbcLeaseBackendContractTest extends JdbcLeaseBackendContractTest {

    private static EmbeddedPostgres postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
        new JdbcLeaseBackend(postgres.getPostgresDatabase()).createSchema();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return postgres.getPostgresDatabase();
    }

    @Override
    protected DataSource secondDataSource() {
        return postgres.getPostgresDatabase();
    }

    @Override
    protected String table() {
        return JdbcLeaseBackend.DEFAULT_TABLE;
    }

    @Override
    protected Dialect dialect() {
        return Dialect.POSTGRESQL;
    }
}
