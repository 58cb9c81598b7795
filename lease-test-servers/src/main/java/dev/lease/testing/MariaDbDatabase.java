package dev.lease.testing;

import java.io.IOException;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.mariadb.jdbc.MariaDbDataSource;

/**
 * A database of one test class's own on the MariaDB server its test JVM shares, as root: see {@link SharedDatabase}.
 * A test that stops or pauses its server, or creates users (server-wide), takes a {@link MariaDbServer} of its own
 * instead.
 */
public final class MariaDbDatabase extends ServerDatabase {

    private final MariaDbServer server;

    MariaDbDatabase(MariaDbServer server, String name) {
        // Every lock wait of the server, as when each class had a server of its own: narrowed to this database through
        // PROCESSLIST.DB, a lower token blocked on the fence's row lock went unseen for 30 s in one CI run (Boot 4.0
        // pass, MariaDbJdbcFenceTest$WithUseAffectedRows). The classes of one test JVM run one after another.
        super(name, server.port(), dataSource(server, name, ""),
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'");
        this.server = server;
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
     * A new DataSource of root to this database with driver options such as {@code useAffectedRows=true}.
     *
     * @param options driver options, each {@code name=value}
     * @return the DataSource
     */
    public DataSource dataSource(String... options) {
        return dataSource(server, name(), String.join("&", options));
    }

    @Override
    public String jdbcUrl() {
        return server.url(name(), "");
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

    private static DataSource dataSource(MariaDbServer server, String name, String options) {
        try {
            return new MariaDbDataSource(server.url(name, options));
        }
        catch (SQLException ex) {
            throw new IllegalArgumentException(options, ex);
        }
    }
}
