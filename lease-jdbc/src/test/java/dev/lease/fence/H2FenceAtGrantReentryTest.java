package dev.lease.fence;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeAll;

/** {@link FenceAtGrantReentryTest} on H2, whose own lock timeout (2 s by default) used to end the self-deadlock. */
class H2FenceAtGrantReentryTest extends FenceAtGrantReentryTest {

    private static final JdbcDataSource H2 = new JdbcDataSource();

    @BeforeAll
    static void createDatabase() {
        H2.setURL("jdbc:h2:mem:fence-at-grant-reentry;DB_CLOSE_DELAY=-1");
        createTables(H2);
    }

    @Override
    protected DataSource dataSource() {
        return H2;
    }
}
