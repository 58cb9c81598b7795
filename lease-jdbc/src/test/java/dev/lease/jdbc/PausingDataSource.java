package dev.lease.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A DataSource that calls a hook with a prepared statement's SQL right before the statement executes, on the
 * executing thread: a test pauses one client there (a stalled process, a slow network) while others go on.
 */
final class PausingDataSource extends DelegatingDataSource {

    /** What runs before each statement; may block, or fail the statement as the database would. */
    @FunctionalInterface
    interface BeforeExecute {
        void before(String sql) throws InterruptedException, SQLException;
    }

    private final BeforeExecute hook;

    PausingDataSource(DataSource target, BeforeExecute hook) {
        super(target);
        this.hook = hook;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection connection = super.getConnection();
        return (Connection) Proxy.newProxyInstance(PausingDataSource.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    Object result = invoke(connection, method, args);
                    if (method.getName().equals("prepareStatement") && result instanceof PreparedStatement ps) {
                        return pausing(ps, (String) args[0]);
                    }
                    return result;
                });
    }

    private PreparedStatement pausing(PreparedStatement ps, String sql) {
        return (PreparedStatement) Proxy.newProxyInstance(PausingDataSource.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("execute") && (args == null || args.length == 0)) {
                        hook.before(sql);
                    }
                    return invoke(ps, method, args);
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
