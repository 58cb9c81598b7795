package dev.lease.faults.harness;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.AbstractDataSource;

/**
 * A DataSource that keeps the connections it opened and hands them out again, a minimal pool as an application
 * would have: a holder's lease call or write then costs its statements, not a new connection, which is what lets a
 * scenario run thousands of cycles. A connection the driver closed (an I/O error, a socket timeout, a crashed
 * server), or that failed with a connection error, is not reused.
 */
public final class ReusedConnections extends AbstractDataSource {

    private static final long CONNECT_FAILURE_PAUSE_MILLIS = 250;

    private final DataSource target;
    private final java.util.Deque<Connection> idle = new java.util.ArrayDeque<>();

    public ReusedConnections(DataSource target) {
        this.target = target;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection connection;
        synchronized (idle) {
            connection = idle.poll();
        }
        while (connection != null && connection.isClosed()) {
            synchronized (idle) {
                connection = idle.poll();
            }
        }
        Connection target = connection != null ? connection : open();
        boolean[] returned = { false };
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] { Connection.class }, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        if (!returned[0]) {
                            returned[0] = true;
                            if (!target.isClosed()) {
                                synchronized (idle) {
                                    idle.push(target);
                                }
                            }
                        }
                        return null;
                    }
                    try {
                        return method.invoke(target, args);
                    }
                    catch (InvocationTargetException ex) {
                        if (ex.getCause() instanceof SQLException sql && sql.getSQLState() != null
                                && sql.getSQLState().startsWith("08")) {
                            // A connection error the driver may not have closed the connection for: not reused.
                            target.close();
                        }
                        throw ex.getCause();
                    }
                });
    }

    /**
     * A new connection; when the server cannot be reached, fails only after a while, as a pool waiting for a
     * connection does: a holder whose database is down would otherwise spin through thousands of empty cycles.
     */
    private Connection open() throws SQLException {
        try {
            return target.getConnection();
        }
        catch (SQLException ex) {
            try {
                Thread.sleep(CONNECT_FAILURE_PAUSE_MILLIS);
            }
            catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
            throw ex;
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLException("one connection, with the target's credentials");
    }
}
