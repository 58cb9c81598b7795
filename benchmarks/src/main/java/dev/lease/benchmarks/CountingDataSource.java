package dev.lease.benchmarks;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.LongAdder;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Counts the round trips a JDBC client makes: statement executions plus commits and rollbacks (PostgreSQL's driver
 * sends BEGIN together with the first statement, so it costs no round trip of its own).
 */
final class CountingDataSource extends DelegatingDataSource {

    private final LongAdder roundTrips = new LongAdder();

    CountingDataSource(DataSource target) {
        super(target);
    }

    long roundTrips() {
        return roundTrips.sum();
    }

    @Override
    public Connection getConnection() throws java.sql.SQLException {
        return wrap(super.getConnection());
    }

    private Connection wrap(Connection target) {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    String name = method.getName();
                    if (name.equals("commit") || name.equals("rollback")) {
                        roundTrips.increment();
                    }
                    Object result = invoke(target, method, args);
                    if (result instanceof Statement statement) {
                        return wrapStatement(statement, method.getReturnType());
                    }
                    return result;
                });
    }

    private Object wrapStatement(Statement target, Class<?> type) {
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().startsWith("execute")) {
                roundTrips.increment();
            }
            return invoke(target, method, args);
        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
