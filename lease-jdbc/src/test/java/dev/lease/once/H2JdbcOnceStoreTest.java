package dev.lease.once;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import dev.lease.LeaseConfigurationException;
import dev.lease.testing.TestTiming;

/** {@link JdbcOnceStore} on H2, and its startup checks. */
class H2JdbcOnceStoreTest extends JdbcOnceStoreTest {

    private static JdbcDataSource dataSource;

    @BeforeAll
    static void createDatabase() {
        dataSource = h2("jdbc-once");
        createTables(dataSource);
    }

    private static JdbcDataSource h2(String name) {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=" + TestTiming.seconds(60).toMillis());
        h2.setUser("sa");
        return h2;
    }

    @AfterAll
    static void dropDatabase() {
        new JdbcTemplate(dataSource).execute("DROP ALL OBJECTS");
    }

    @Override
    protected DataSource dataSource() {
        return dataSource;
    }

    @Override
    protected void awaitABlockedSession(JdbcTemplate observer) {
        // A wait on a unique key another transaction inserted shows no BLOCKER_ID, but the session stays inside its
        // statement on lease_once.
        awaitTrue(() -> observer.queryForObject("SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS"
                + " WHERE SESSION_ID <> SESSION_ID() AND (BLOCKER_ID IS NOT NULL"
                + " OR LOWER(EXECUTING_STATEMENT) LIKE '%lease_once%')", Integer.class) > 0);
    }

    @Test
    void aMissingTableIsRefusedWithItsDdlAndTheProperty() {
        JdbcDataSource empty = h2("jdbc-once-empty");
        JdbcOnceStore store = new JdbcOnceStore(empty, new DataSourceTransactionManager(empty));
        assertThatThrownBy(() -> store.verify("@Once on Reports.nightly() (key 'nightly-#{period}')"))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("@Once on Reports.nightly()").hasMessageContaining("lease_once")
                .hasMessageContaining("CREATE TABLE IF NOT EXISTS lease_once")
                .hasMessageContaining("lease.once.initialize-schema: always");
    }

    @Test
    void aTransactionManagerOfAnotherDataSourceIsRefused() {
        JdbcDataSource other = h2("jdbc-once-other");
        JdbcOnceStore store = new JdbcOnceStore(dataSource, new DataSourceTransactionManager(other));
        assertThatThrownBy(() -> store.verify("@Once on Reports.nightly() (key 'nightly')"))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("cannot run in a transaction of the DataSource of lease_once");
    }
}
