package dev.lease.jdbc;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.sql.SqlDialect;

/** Shared tokens on H2. */
class H2SharedTokenJdbcLeaseBackendContractTest extends SharedTokenJdbcLeaseBackendContractTest {

    private static final String URL = "jdbc:h2:mem:jdbc-lease-shared;DB_CLOSE_DELAY=-1";

    private static JdbcDataSource first;
    private static JdbcDataSource second;

    @BeforeAll
    static void createSchema() {
        first = h2();
        second = h2();
        // With deletion, so that the index on expires_at is created too; twice, since startup runs it every time.
        creatingSchema(first).createSchema();
        creatingSchema(first).createSchema();
    }

    @AfterAll
    static void dropDatabase() {
        new JdbcTemplate(first).execute("DROP ALL OBJECTS");
    }

    private static JdbcDataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(URL);
        ds.setUser("sa");
        return ds;
    }

    @Override
    protected DataSource dataSource() {
        return first;
    }

    @Override
    protected DataSource secondDataSource() {
        return second;
    }

    @Override
    protected String table() {
        return "lease_shared";
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.H2;
    }
}
