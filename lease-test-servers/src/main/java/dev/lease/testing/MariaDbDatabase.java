package dev.lease.testing;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import org.mariadb.jdbc.MariaDbDataSource;

/**
 * A database of one test class's own on the MariaDB server its test JVM shares: see {@link SharedDatabase}. A test
 * that stops or pauses its server, or creates users (server-wide), takes a {@link MariaDbServer} of its own instead.
 */
public final class MariaDbDatabase {

    private final MariaDbServer server;
    private final String name;
    private final DataSource dataSource;

    MariaDbDatabase(MariaDbServer server, String name) {
        this.server = server;
        this.name = name;
        this.dataSource = dataSource(new String[0]);
    }

    /**
     * A new database on the shared server, named after {@code hint}, for what is not a test class (such as one
     * invocation of a parameterized class); skips the calling tests when MariaDB is not installed.
     *
     * @param hint what the name starts with, such as the test's class name
     * @return the empty database
     */
    public static MariaDbDatabase create(String hint) {
        return SharedServers.mariaDbDatabase(hint);
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
     * The shared server's port on 127.0.0.1.
     *
     * @return the port
     */
    public int port() {
        return server.port();
    }

    /**
     * Root's DataSource to this database, always the same object (transactions bind to it), opening a new connection
     * each time.
     *
     * @return the DataSource
     */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * A new DataSource of root to this database with driver options such as {@code useAffectedRows=true}.
     *
     * @param options driver options, each {@code name=value}
     * @return the DataSource
     */
    public DataSource dataSource(String... options) {
        try {
            return new MariaDbDataSource(server.url(name, String.join("&", options)));
        }
        catch (SQLException ex) {
            throw new IllegalArgumentException(String.join("&", options), ex);
        }
    }

    /**
     * Root's JDBC URL to this database, for a connection pool or a child JVM.
     *
     * @return the URL, with the user in it
     */
    public String jdbcUrl() {
        return server.url(name, "");
    }

    /**
     * Loads one time zone of the system's tzdata into the shared server (time zones are server-wide), so that
     * sessions can {@code SET time_zone} to it.
     *
     * @param zone the zone's name, such as {@code Europe/Paris}
     * @return false when tzdata or the client tools are not installed
     * @throws IOException when the client tools could not run
     * @throws InterruptedException when interrupted while they ran
     */
    public boolean loadTimeZone(String zone) throws IOException, InterruptedException {
        return server.loadTimeZone(zone);
    }

    /**
     * How many InnoDB transactions of sessions on this database wait for a lock now; another class's sessions on the
     * shared server do not count.
     *
     * @return the number of waiting transactions
     */
    public int lockWaits() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("SELECT COUNT(*) FROM information_schema.INNODB_TRX t"
                        + " JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id"
                        + " WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()")) {
            rows.next();
            return rows.getInt(1);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("information_schema.INNODB_TRX of " + name + " unreadable", ex);
        }
    }
}
