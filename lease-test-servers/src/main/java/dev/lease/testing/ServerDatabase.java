package dev.lease.testing;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

/**
 * A database of one test class's own on a server its test JVM shares: see {@link SharedDatabase}.
 */
public abstract sealed class ServerDatabase permits PostgresDatabase, MariaDbDatabase {

    private final String name;
    private final int port;
    private final DataSource dataSource;
    private final String lockWaitsQuery;

    ServerDatabase(String name, int port, DataSource dataSource, String lockWaitsQuery) {
        this.name = name;
        this.port = port;
        this.dataSource = dataSource;
        this.lockWaitsQuery = lockWaitsQuery;
    }

    /**
     * The database's name, unique in this JVM.
     *
     * @return the name, a valid unquoted identifier
     */
    public final String name() {
        return name;
    }

    /**
     * The shared server's port.
     *
     * @return the port
     */
    public final int port() {
        return port;
    }

    /**
     * The administrator's DataSource to this database, always the same object (transactions bind to it), opening a
     * new connection each time.
     *
     * @return the DataSource
     */
    public final DataSource dataSource() {
        return dataSource;
    }

    /**
     * The administrator's JDBC URL to this database, for a connection pool or a child JVM.
     *
     * @return the URL, with the user in it
     */
    public abstract String jdbcUrl();

    /**
     * How many sessions on this database wait for a lock now; another class's sessions on the shared server do not
     * count.
     *
     * @return the number of waiting sessions
     */
    public final int lockWaits() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet rows = s.executeQuery(lockWaitsQuery)) {
            rows.next();
            return rows.getInt(1);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Lock waits of database " + name + " unreadable", ex);
        }
    }
}
