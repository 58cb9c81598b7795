package dev.lease.faults.harness;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.postgresql.ds.PGSimpleDataSource;

import dev.lease.testing.PostgresServer;
import dev.lease.testing.TestTiming;

/**
 * An embedded PostgreSQL that can crash and come back: a {@link PostgresServer}, whose restart keeps the tables and
 * the URLs, with {@code synchronous_commit=on} and {@code fsync=on} (the embedded defaults are off), so that a commit
 * is acknowledged only once its WAL is flushed: an acknowledged write then survives the crash, and a lost one is a
 * real finding. {@link #crash()} is {@code pg_ctl stop -m immediate}: SIGQUIT to the postmaster, no checkpoint,
 * crash recovery on the next start.
 */
public final class CrashablePostgres implements AutoCloseable {

    private final PostgresServer server;

    private CrashablePostgres(PostgresServer server) {
        this.server = server;
    }

    public static CrashablePostgres start() throws IOException {
        return new CrashablePostgres(PostgresServer.start(Map.of("synchronous_commit", "on", "fsync", "on",
                "max_connections", "300")));
    }

    public int port() {
        return server.port();
    }

    /** A superuser DataSource straight to the server, one connection per call. */
    public DataSource dataSource() {
        return dataSource(port(), Map.of());
    }

    /**
     * A DataSource to {@code port} (the server's, or a proxy's in front of it) with driver options such as
     * {@code socketTimeout}.
     */
    public static DataSource dataSource(int port, Map<String, String> options) {
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
    public static String jdbcUrl(int port, String options) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres"
                + (options.isEmpty() ? "" : "&" + options);
    }

    /** Kills the server the way {@code pg_ctl stop -m immediate} does and waits until it is gone. */
    synchronized void crash() throws IOException, InterruptedException {
        long pid = server.pid();
        ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow(() -> new IOException("no postmaster " + pid));
        Signals.send(pid, "QUIT");
        try {
            postmaster.onExit().get(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
            throw new IOException("the postmaster " + pid + " did not exit after SIGQUIT", ex);
        }
        // Nothing runs any more: stopping only lets go of the data directory's lock.
        server.stop();
    }

    /** Starts the server again on the same data directory and port; crash recovery replays the WAL. */
    synchronized void up() throws IOException {
        server.restart();
    }

    @Override
    public synchronized void close() throws IOException {
        server.close();
    }
}
