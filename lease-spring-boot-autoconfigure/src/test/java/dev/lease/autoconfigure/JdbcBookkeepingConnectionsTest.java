package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.net.ConnectException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.logging.Logger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * What lease bookkeeping says when its pool hands out no connection: the pool, and what to change. The translation
 * keeps the kind of exception (Spring translates it as before) and the original as the cause.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcBookkeepingConnectionsTest {

    private static final String WHEN_BUSY = "raise lease.jdbc.datasource.maximum-pool-size";

    @Test
    void aPoolThatTimedOutWithEveryConnectionBusySaysWhatToRaise() {
        SQLTransientConnectionException timedOut = new SQLTransientConnectionException(
                "lease-bookkeeping - Connection is not available, request timed out after 500ms (total=4, active=4)");
        assertThatThrownBy(() -> connections(failing(timedOut)).getConnection())
                .isInstanceOf(SQLTransientConnectionException.class)
                .hasMessageStartingWith("No connection for lease bookkeeping from pool 'lease-bookkeeping' within ")
                .hasMessageContaining("(total=4, active=4)").hasMessageEndingWith("): " + WHEN_BUSY)
                .hasCause(timedOut);
    }

    @Test
    void aPoolThatCannotOpenConnectionsSaysToCheckTheDatabaseAndTheSettings() {
        SQLTransientConnectionException timedOut = new SQLTransientConnectionException(
                "lease-bookkeeping - Connection is not available, request timed out after 500ms", "08001",
                new ConnectException("Connection refused"));
        assertThatThrownBy(() -> connections(failing(timedOut)).getConnection())
                .isInstanceOf(SQLTransientConnectionException.class)
                .hasMessageEndingWith("check that the database is running and reachable, and fix spring.datasource.* "
                        + "(url, username, password)")
                .hasMessageNotContaining(WHEN_BUSY)
                .satisfies(ex -> assertThat(((SQLException) ex).getSQLState()).isEqualTo("08001"));
    }

    @Test
    void anotherFailureKeepsItsKindAndStateAndLosesItsCredentials() {
        SQLException refused = new SQLException("cannot connect to jdbc:postgresql://app:hunter2@db/app", "28P01", 7);
        assertThatThrownBy(() -> connections(failing(refused)).getConnection("app", "hunter2"))
                .isExactlyInstanceOf(SQLException.class).hasMessageNotContaining("hunter2").hasCause(refused)
                .satisfies(ex -> {
                    assertThat(((SQLException) ex).getSQLState()).isEqualTo("28P01");
                    assertThat(((SQLException) ex).getErrorCode()).isEqualTo(7);
                });
    }

    /** The engine may have stopped waiting long before: the wait itself is logged, once a minute at most. */
    @Test
    void aLongWaitForAConnectionIsLoggedOnce(CapturedOutput output) throws Exception {
        DataSource connections = connections(new Fake(null, 1_100));
        connections.getConnection();
        connections.getConnection();
        assertThat(output).containsOnlyOnce("Lease bookkeeping waited").contains("for a connection from pool "
                + "'lease-bookkeeping'").contains(WHEN_BUSY);
    }

    @Test
    void aQuickConnectionIsNotLogged(CapturedOutput output) throws Exception {
        connections(new Fake(null, 0)).getConnection();
        assertThat(output).doesNotContain("Lease bookkeeping waited");
    }

    private static DataSource connections(DataSource target) {
        return new BookkeepingConnections(target, () -> "pool 'lease-bookkeeping'", WHEN_BUSY,
                "fix spring.datasource.*");
    }

    private static DataSource failing(SQLException failure) {
        return new Fake(failure, 0);
    }

    /** Fails with {@code failure}, or hands out no real connection (null) after {@code delayMillis}. */
    private record Fake(SQLException failure, long delayMillis) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            if (failure != null) {
                throw failure;
            }
            try {
                Thread.sleep(delayMillis);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return null;
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }
}
