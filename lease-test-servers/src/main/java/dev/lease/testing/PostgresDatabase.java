package dev.lease.testing;

import java.util.Map;

import javax.sql.DataSource;

/**
 * A database of one test class's own on the PostgreSQL server its test JVM shares, as the superuser {@code postgres}:
 * see {@link SharedDatabase}. A test that stops, pauses or restarts its server, or creates roles (server-wide), takes
 * a {@link PostgresServer} of its own instead.
 */
public final class PostgresDatabase extends ServerDatabase {

    private final PostgresServer server;

    PostgresDatabase(PostgresServer server, String name) {
        super(name, server.port(), server.dataSource(name, Map.of()), "SELECT COUNT(*) FROM pg_stat_activity"
                + " WHERE wait_event_type = 'Lock' AND datname = current_database()");
        this.server = server;
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
     * A new DataSource to this database with pgjdbc properties such as {@code ApplicationName} or {@code user}.
     *
     * @param properties pgjdbc connection properties, by name
     * @return the DataSource
     */
    public DataSource dataSource(Map<String, String> properties) {
        return server.dataSource(name(), properties);
    }

    @Override
    public String jdbcUrl() {
        return server.jdbcUrl(name());
    }
}
