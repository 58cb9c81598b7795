package dev.lease.jdbc;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.sql.SqlDialect;

/** The JDBC backend on H2, with a schema-qualified table; two DataSources stand for two application instances. */
class H2JdbcLeaseBackendContractTest extends JdbcLeaseBackendContractTest {

    private static final String URL = "jdbc:h2:mem:jdbc-lease-contract;DB_CLOSE_DELAY=-1";

    private static JdbcDataSource first;
    private static JdbcDataSource second;

    @BeforeAll
    static void createSchema() {
        first = h2();
        second = h2();
        new JdbcTemplate(first).execute("CREATE SCHEMA IF NOT EXISTS leases");
        new JdbcLeaseBackend(first, "leases.lease_lock").createSchema();
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
        return "leases.lease_lock";
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.H2;
    }
}
