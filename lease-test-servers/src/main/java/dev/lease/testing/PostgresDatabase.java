package dev.lease.testing;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import javax.sql.DataSource;

/**
 * A database of one test class's own on the PostgreSQL server its test JVM shares: see {@link SharedDatabase}. A test
 * that stops, pauses or restarts its server takes a {@link PostgresServer} of its own instead.
 */
public final class PostgresDatabase {

    private final PostgresServer server;
    private final String name;
    private final DataSource dataSource;

    PostgresDatabase(PostgresServer server, String name) {
        this.server = server;
        this.name = name;
        this.dataSource = server.dataSource(name, Map.of());
    }

    /**
     * A new database on the shared server, named after {@code hint}, for what is not a test class (such as one
     * invocation of a parameterized class); {@link SharedDatabase} does it for a class.
     *
     * @param hint what the name starts with, such as the test's class name
     * @return the empty database
     */
    public static PostgresDatabase create(String hint) {
        return SharedServers.postgresDatabase(hint);
    }

    /**
     * The database's name, unique in this JVM.
     *
     * @return the name, a valid unquoted identifier
     */
    public String name() {
        return name;
    }

    /**
     * The shared server's port.
     *
     * @return the port
     */
    public int port() {
        return server.port();
    }

    /**
     * The superuser's DataSource to this database, always the same object (transactions bind to it), opening a new
     * connection each time.
     *
     * @return the DataSource
     */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * A new DataSource to this database with pgjdbc properties such as {@code ApplicationName} or {@code user}.
     *
     * @param properties pgjdbc connection properties, by name
     * @return the DataSource
     */
    public DataSource dataSource(Map<String, String> properties) {
        return server.dataSource(name, properties);
    }

    /**
     * The superuser's JDBC URL to this database, for a connection pool or a child JVM.
     *
     * @return the URL, with the user in it
     */
    public String jdbcUrl() {
        return server.jdbcUrl(name);
    }

    /**
     * How many sessions on this database wait for a lock now; another class's sessions on the shared server do not
     * count.
     *
     * @return the number of waiting sessions
     */
    public int lockWaits() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("SELECT COUNT(*) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND datname = current_database()")) {
            rows.next();
            return rows.getInt(1);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("pg_stat_activity of " + name + " unreadable", ex);
        }
    }
}
