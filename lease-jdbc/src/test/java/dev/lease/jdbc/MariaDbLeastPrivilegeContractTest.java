package dev.lease.jdbc;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.sql.SqlDialect;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.TcpProxy;

/**
 * The contract suite as a MariaDB user with only the grants docs/security.md gives the lease user
 * ({@code initialize-schema: never}): SELECT, INSERT, UPDATE and DELETE on {@code lease_lock}, nothing else.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbLeastPrivilegeContractTest extends JdbcLeaseBackendContractTest {

    private static MariaDbServer mariadb;
    private static DataSource admin;
    private static DataSource leaser;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("leases");
        admin = mariadb.dataSource();
        new JdbcLeaseBackend(admin).createSchema();
        JdbcTemplate root = new JdbcTemplate(admin);
        root.execute("CREATE USER 'leaser'@'%' IDENTIFIED BY 'leaser-pw'");
        root.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON leases.lease_lock TO 'leaser'@'%'");
        leaser = mariadb.dataSourceAs("leaser", "leaser-pw");
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return leaser;
    }

    @Override
    protected DataSource secondDataSource() {
        return leaser;
    }

    @Override
    protected DataSource adminDataSource() {
        return admin;
    }

    @Override
    protected void grantOnTestTable(String testTable) {
        new JdbcTemplate(admin).execute("GRANT SELECT, INSERT, UPDATE, DELETE ON leases." + testTable
                + " TO 'leaser'@'%'");
    }

    @Override
    protected String table() {
        return JdbcLeaseBackend.DEFAULT_TABLE;
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.MYSQL;
    }

    @Override
    protected int serverPort() {
        return mariadb.port();
    }

    @Override
    protected SingleConnectionDataSource through(TcpProxy proxy) {
        return new SingleConnectionDataSource("jdbc:mariadb://127.0.0.1:" + proxy.port()
                + "/leases?user=leaser&password=leaser-pw", true);
    }
}
