package dev.lease.faults;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.util.FileSystemUtils;

import dev.lease.testing.TestTiming;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * An embedded PostgreSQL that can crash and come back: a fixed data directory and port, so a restart keeps the
 * tables and the URLs, and {@code synchronous_commit=on} (the embedded default is off), so that a commit is
 * acknowledged only once its WAL is flushed: an acknowledged write then survives the crash, and a lost one is a
 * real finding. {@link #crash()} is {@code pg_ctl stop -m immediate}: SIGQUIT to the postmaster, no checkpoint,
 * crash recovery on the next start.
 */
final class CrashablePostgres implements AutoCloseable {

    private final Path dataDirectory;
    private final int port;
    private volatile EmbeddedPostgres postgres;

    private CrashablePostgres(Path dataDirectory, int port) {
        this.dataDirectory = dataDirectory;
        this.port = port;
    }

    static CrashablePostgres start(String name) throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        CrashablePostgres pg = new CrashablePostgres(Files.createTempDirectory("lease-" + name + "-pg"), port);
        pg.up();
        return pg;
    }

    int port() {
        return port;
    }

    /** A superuser DataSource straight to the server, one connection per call. */
    DataSource dataSource() {
        return dataSource(port, Map.of());
    }

    /**
     * A DataSource to {@code port} (the server's, or a proxy's in front of it) with driver options such as
     * {@code socketTimeout}.
     */
    static DataSource dataSource(int port, Map<String, String> options) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] { "127.0.0.1" });
        ds.setPortNumbers(new int[] { port });
        ds.setDatabaseName("postgres");
        ds.setUser("postgres");
        options.forEach((k, v) -> {
            try {
                ds.setProperty(k, v);
            }
            catch (java.sql.SQLException ex) {
                throw new IllegalArgumentException(k + "=" + v, ex);
            }
        });
        return ds;
    }

    /** The JDBC URL of {@code port} (the server's or a proxy's), for a child JVM. */
    static String jdbcUrl(int port, String options) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres"
                + (options.isEmpty() ? "" : "&" + options);
    }

    /** Kills the server the way {@code pg_ctl stop -m immediate} does and waits until it is gone. */
    synchronized void crash() throws IOException, InterruptedException {
        // The process zonky started is pg_ctl's, long gone; the postmaster's pid is in the data directory.
        long pid = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
        ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow(() -> new IOException("no postmaster " + pid));
        Signals.send(pid, "QUIT");
        try {
            postmaster.onExit().get(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
            throw new IOException("the postmaster " + pid + " did not exit after SIGQUIT", ex);
        }
        EmbeddedPostgres down = postgres;
        postgres = null;
        // Its pg_ctl stop fails (nothing runs); what it still does is let go of the data directory's lock.
        down.close();
    }

    /** Starts the server again on the same data directory and port; crash recovery replays the WAL. */
    synchronized void up() throws IOException {
        postgres = EmbeddedPostgres.builder().setDataDirectory(dataDirectory).setCleanDataDirectory(false)
                .setPort(port).setServerConfig("synchronous_commit", "on").setServerConfig("fsync", "on")
                .setServerConfig("max_connections", "300").start();
    }

    @Override
    public synchronized void close() throws IOException {
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
        FileSystemUtils.deleteRecursively(dataDirectory);
    }
}
