package dev.lease.jdbc;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.lease.sql.SqlDialect;
import dev.lease.testing.MariaDbServer;

/**
 * Shared tokens on a real MariaDB server, where a token is drawn with {@code LAST_INSERT_ID(expr)}; the second
 * instance's driver counts changed rows ({@code useAffectedRows=true}).
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbSharedTokenJdbcLeaseBackendContractTest extends SharedTokenJdbcLeaseBackendContractTest {

    private static MariaDbServer mariadb;
    private static DataSource first;
    private static DataSource second;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("leases");
        first = mariadb.dataSource();
        second = mariadb.dataSource("useAffectedRows=true");
        // With deletion, so that the index on expires_at is created too; twice, since startup runs it every time.
        creatingSchema(first).createSchema();
        creatingSchema(first).createSchema();
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
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
        return SqlDialect.MYSQL;
    }
}
