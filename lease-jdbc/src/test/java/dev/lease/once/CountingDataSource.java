package dev.lease.once;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/** Counts the statements executed on its connections ({@code execute*} calls on their statements). */
final class CountingDataSource extends DelegatingDataSource {

    private final AtomicInteger statements = new AtomicInteger();

    CountingDataSource(DataSource target) {
        super(target);
    }

    int statements() {
        return statements.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection target = super.getConnection();
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    return result instanceof Statement statement ? counted(statement, method.getReturnType()) : result;
                });
    }

    private Object counted(Statement target, Class<?> type) {
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().startsWith("execute")) {
                statements.incrementAndGet();
            }
            return invoke(target, method, args);
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
