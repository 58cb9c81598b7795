package dev.lease.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.junit.jupiter.api.Assumptions;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * A throwaway MariaDB server: Debian's {@code mariadbd} as a child process on a free port of 127.0.0.1, with a datadir
 * of its own in a temporary directory that {@link #close()} deletes. Tests on a machine without the
 * {@code mariadb-server} package are skipped, with the command that installs it: annotate the class with
 * {@code @EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)}.
 */
public final class MariaDbServer implements AutoCloseable {

    /** The condition for {@code @EnabledIf}. */
    public static final String INSTALLED = "dev.lease.testing.MariaDbServer#installed";

    /** Why tests are skipped without it. */
    public static final String NOT_INSTALLED = "MariaDB is not installed (no mariadbd or mariadb-install-db): install "
            + "it with 'apt-get install -y mariadb-server' (.ci/run does) to run the MariaDB tests";

    private static final List<String> BIN_DIRS = List.of("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin",
            "/usr/local/mysql/bin");

    /** Small InnoDB files and no fsync per commit: the datadir is deleted anyway, and the disk is shared. */
    private static final List<String> INNODB = List.of("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M",
            "--innodb-flush-log-at-trx-commit=2");

    private final Path dir;
    private final Path socket;
    private final int port;
    private final String database;
    private final Process process;
    private final Thread cleanup;

    private MariaDbServer(Path dir, int port, String database, Process process) {
        this.dir = dir;
        this.socket = dir.resolve("mariadb.sock");
        this.port = port;
        this.database = database;
        this.process = process;
        // A JVM that exits without running @AfterAll must not leave a server and its datadir behind.
        this.cleanup = new Thread(this::stop, "mariadb-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * Installs a fresh datadir, starts the server, waits until it accepts connections and creates {@code database}.
     * Skips the calling tests when MariaDB is not installed.
     */
    public static MariaDbServer start(String database) throws IOException, InterruptedException {
        Path mariadbd = requireBinary("mariadbd");
        Path installDb = requireBinary("mariadb-install-db");
        Path dir = Files.createTempDirectory("lease-mariadb");
        List<String> asUser = "root".equals(System.getProperty("user.name")) ? List.of("--user=root") : List.of();
        // Internal temporary tables go to a directory of this server's own: in the shared /tmp, servers bootstrapped
        // at once by parallel test JVMs met each other's '#sql-temptable-*' files (the install failed with
        // "Unknown table 'mysql.tmp_proxies_priv'" on a CI run).
        String tmpdir = "--tmpdir=" + Files.createDirectory(dir.resolve("tmp"));

        List<String> install = new ArrayList<>(List.of(installDb.toString(), "--no-defaults",
                "--datadir=" + dir.resolve("data"), "--auth-root-authentication-method=normal", "--skip-test-db",
                tmpdir));
        install.addAll(asUser);
        install.addAll(INNODB);
        run(install, dir.resolve("install.log"), seconds(120));

        int port = freePort();
        List<String> server = new ArrayList<>(List.of(mariadbd.toString(), "--no-defaults",
                "--datadir=" + dir.resolve("data"), "--socket=" + dir.resolve("mariadb.sock"),
                "--pid-file=" + dir.resolve("mariadb.pid"), "--log-error=" + dir.resolve("error.log"),
                "--skip-networking=0", "--bind-address=127.0.0.1", "--port=" + port, tmpdir,
                // What a Debian server is configured with; the lease scripts must not depend on it.
                "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci"));
        server.addAll(asUser);
        server.addAll(INNODB);
        Process process = new ProcessBuilder(server).redirectErrorStream(true)
                .redirectOutput(dir.resolve("mariadbd.out").toFile()).start();
        MariaDbServer started = new MariaDbServer(dir, port, database, process);
        try {
            started.awaitConnections();
            try (Connection c = DriverManager.getConnection(started.url("", "")); Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + database);
            }
            return started;
        }
        catch (InterruptedException | SQLException | RuntimeException ex) {
            String log = started.errorLog();
            started.close();
            throw new IllegalStateException("MariaDB did not start: " + ex + "\n" + log, ex);
        }
    }

    /** A DataSource opening a new connection each time, with driver options such as {@code useAffectedRows=true}. */
    public DataSource dataSource(String... options) {
        try {
            return new MariaDbDataSource(url(database, String.join("&", options)));
        }
        catch (SQLException ex) {
            throw new IllegalArgumentException(ex);
        }
    }

    /**
     * A DataSource of another user than root (created beforehand with {@code CREATE USER}), opening a new connection
     * each time, for tests of what a user with only some grants can do.
     */
    public DataSource dataSourceAs(String user, String password) {
        try {
            return new MariaDbDataSource("jdbc:mariadb://127.0.0.1:" + port + "/" + database + "?user=" + user
                    + "&password=" + password);
        }
        catch (SQLException ex) {
            throw new IllegalArgumentException(ex);
        }
    }

    /** The server's TCP port, e.g. for a proxy in front of it. */
    public int port() {
        return port;
    }

    /** mariadbd's process id, to pause it for real ({@code kill -STOP}). */
    public long pid() {
        return process.pid();
    }

    /**
     * The JDBC URL of the database as reached on {@code viaPort} (the server's own, or a proxy's in front of it),
     * with driver options such as {@code socketTimeout=3000}.
     */
    public String jdbcUrl(int viaPort, String... options) {
        return "jdbc:mariadb://127.0.0.1:" + viaPort + "/" + database + "?user=root"
                + (options.length == 0 ? "" : "&" + String.join("&", options));
    }

    /**
     * Loads one time zone of the system's tzdata into the server, so that sessions can {@code SET time_zone} to it
     * (MariaDB knows only numeric offsets until then); false when tzdata or the client tools are not installed.
     */
    public boolean loadTimeZone(String zone) throws IOException, InterruptedException {
        Path file = Path.of("/usr/share/zoneinfo", zone);
        Optional<Path> toSql = binary("mariadb-tzinfo-to-sql");
        Optional<Path> client = binary("mariadb");
        if (!Files.isReadable(file) || toSql.isEmpty() || client.isEmpty()) {
            return false;
        }
        List<Process> pipeline = ProcessBuilder.startPipeline(List.of(
                new ProcessBuilder(toSql.get().toString(), file.toString(), zone)
                        .redirectError(dir.resolve("tzinfo.log").toFile()),
                new ProcessBuilder(client.get().toString(), "--no-defaults", "--user=root", "--socket=" + socket,
                        "mysql").redirectErrorStream(true).redirectOutput(dir.resolve("tzinfo-load.log").toFile())));
        for (Process p : pipeline) {
            awaitExit(p, seconds(60), "loading time zone " + zone, dir.resolve("tzinfo-load.log"));
        }
        return true;
    }

    /** Stops the server and deletes its files. */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        catch (IllegalStateException shuttingDown) {
            // The hook is running or has run: nothing left to undo.
        }
    }

    private synchronized void stop() {
        if (!Files.exists(dir)) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException ex) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The JDBC URL of root to {@code db} with driver options joined by {@code &}, for {@link MariaDbDatabase}. */
    String url(String db, String options) {
        return "jdbc:mariadb://127.0.0.1:" + port + "/" + db + "?user=root" + (options.isEmpty() ? "" : "&" + options);
    }

    private void awaitConnections() throws InterruptedException, SQLException {
        long deadline = System.nanoTime() + seconds(120).toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("mariadbd exited with status " + process.exitValue());
            }
            try (Connection c = DriverManager.getConnection(url("", "connectTimeout=1000"))) {
                return;
            }
            catch (SQLException notYet) {
                if (System.nanoTime() > deadline) {
                    throw notYet;
                }
            }
            Thread.sleep(50);
        }
    }

    private String errorLog() {
        try {
            Path log = dir.resolve("error.log");
            return Files.exists(log) ? Files.readString(log) : "(no error log)";
        }
        catch (IOException ex) {
            return "(error log unreadable: " + ex + ")";
        }
    }

    private static void run(List<String> command, Path log, Duration bound) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        awaitExit(p, bound, String.join(" ", command), log);
    }

    private static void awaitExit(Process p, Duration bound, String what, Path log)
            throws IOException, InterruptedException {
        if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(what + " did not finish within " + bound);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(what + " failed with status " + p.exitValue() + ":\n"
                    + (Files.exists(log) ? Files.readString(log) : ""));
        }
    }

    /**
     * Whether the server binaries are installed; for {@code @EnabledIf}, which unlike an assumption failing in
     * {@code @BeforeAll} shows up in Surefire's report as skipped tests with their reason.
     */
    public static boolean installed() {
        return binary("mariadbd").isPresent() && binary("mariadb-install-db").isPresent();
    }

    private static Path requireBinary(String name) {
        Optional<Path> found = binary(name);
        Assumptions.assumeTrue(found.isPresent(), "MariaDB is not installed (no " + name + "), so the MariaDB tests "
                + "are skipped: install it with 'apt-get install -y mariadb-server' (.ci/run does)");
        return found.get();
    }

    private static Optional<Path> binary(String name) {
        return Stream.concat(Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)),
                BIN_DIRS.stream()).filter(d -> !d.isEmpty()).map(d -> Path.of(d, name)).filter(Files::isExecutable)
                .findFirst();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static Duration seconds(long s) {
        return TestTiming.seconds(s);
    }
}
