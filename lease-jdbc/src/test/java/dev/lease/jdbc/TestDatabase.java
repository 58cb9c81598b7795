package dev.lease.jdbc;

import java.util.function.Consumer;
import java.util.function.Function;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.sql.SqlDialect;
import dev.lease.testing.TcpProxy;

/**
 * The database of one {@link JdbcVariant} while its tests run, the lease table in place.
 *
 * @param server the server or shared-server database of this variant, for what only that database has
 * @param closer what {@link #close()} closes: a server of the variant's own, for H2 what drops the database, nothing
 *     for a database on the JVM's shared server (which stops when the JVM exits)
 * @param first the DataSource of the first application instance: one object, since transactions are bound to it
 * @param second another DataSource on the same database, as a second application instance would have
 * @param admin a DataSource allowed to create, grant on and drop tables; {@code first} unless the lease user has
 *     only the grants docs/security.md gives it
 * @param table the lease table
 * @param dialect the database's SQL dialect
 * @param port the server's TCP port, or 0 when the database runs in this JVM
 * @param throughProxy one connection of the lease user through a {@link TcpProxy} in front of {@code port}
 * @param grantOnTestTable grants the lease user what it needs on a table a test made through {@code admin}
 */
record TestDatabase(Object server, AutoCloseable closer, DataSource first, DataSource second, DataSource admin,
        String table, SqlDialect dialect, int port, Function<TcpProxy, SingleConnectionDataSource> throughProxy,
        Consumer<String> grantOnTestTable) implements AutoCloseable {

    /** H2 in this JVM, dropped on {@link #close()}: no network to a server. */
    static TestDatabase inThisJvm(DataSource first, DataSource second, String table) {
        AutoCloseable drop = () -> new JdbcTemplate(first).execute("DROP ALL OBJECTS");
        return new TestDatabase(drop, drop, first, second, first,
                table, SqlDialect.H2, 0, proxy -> {
                    throw new UnsupportedOperationException("no network between this test and its database");
                }, testTable -> { });
    }

    /** A server whose lease user may do anything, stopped on {@link #close()}. */
    static TestDatabase onServer(AutoCloseable server, DataSource first, DataSource second, String table,
            SqlDialect dialect, int port, Function<TcpProxy, SingleConnectionDataSource> throughProxy) {
        return new TestDatabase(server, server, first, second, first, table, dialect, port, throughProxy,
                testTable -> { });
    }

    /** A database of this variant's own on the server the test JVM shares, left there by {@link #close()}. */
    static TestDatabase onSharedServer(Object database, DataSource first, DataSource second, String table,
            SqlDialect dialect, int port, Function<TcpProxy, SingleConnectionDataSource> throughProxy) {
        return new TestDatabase(database, () -> { }, first, second, first, table, dialect, port, throughProxy,
                testTable -> { });
    }

    /** The same database where the lease user is another than {@code admin}, who grants it each test's table. */
    TestDatabase administeredBy(DataSource admin, Consumer<String> grantOnTestTable) {
        return new TestDatabase(server, closer, first, second, admin, table, dialect, port, throughProxy,
                grantOnTestTable);
    }

    /** The server of this database, for what only that database has; fails when the variant runs another. */
    <S> S server(Class<S> type) {
        if (!type.isInstance(server)) {
            throw new IllegalStateException("this test needs a " + type.getSimpleName() + ", not the "
                    + dialect + " database of this variant");
        }
        return type.cast(server);
    }

    /** One connection of the lease user through {@code proxy}; only when {@link #port()} is positive. */
    SingleConnectionDataSource through(TcpProxy proxy) {
        return throughProxy.apply(proxy);
    }

    @Override
    public void close() throws Exception {
        closer.close();
    }
}
