package dev.lease.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import javax.sql.DataSource;

/**
 * The PostgreSQL and MariaDB servers one test JVM shares, each started on first use and stopped when the JVM exits,
 * and the fresh databases made on them. A server per test class cost a PostgreSQL initdb or a MariaDB install (seconds
 * each on a loaded 2-core CI machine) for every class; a database costs a {@code CREATE DATABASE}.
 *
 * <p>The servers live as long as the JVM, not as long as a JUnit root store: Surefire's reused forks hand a JVM one
 * test class per launcher run when they read classes lazily ({@code forkCount} above 1), so a root store would close
 * the server after every class.
 */
final class SharedServers {

    /** What both servers accept unquoted, within the shorter limit of the two (PostgreSQL: 63 bytes). */
    private static final Pattern DATABASE_NAME = Pattern.compile("[a-z][a-z0-9_]{0,62}");

    /** Room for the {@code _<n>} that makes a name unique. */
    private static final int HINT_LENGTH = 48;

    private static final AtomicInteger DATABASES = new AtomicInteger();

    private static PostgresServer postgres;
    private static MariaDbServer mariadb;

    private SharedServers() {
    }

    /** A new database on the shared PostgreSQL server, which starts now if it is not running yet. */
    static synchronized PostgresDatabase postgresDatabase(String hint) {
        if (postgres == null) {
            try {
                PostgresServer started = PostgresServer.start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        started.close();
                    }
                    catch (IOException ex) {
                        // The JVM is exiting: the temporary directory is all that is left behind.
                    }
                }, "shared-postgres-cleanup"));
                postgres = started;
            }
            catch (IOException ex) {
                throw new UncheckedIOException("the shared PostgreSQL server did not start", ex);
            }
        }
        String name = uniqueName(hint);
        create(postgres.dataSource(), name);
        return new PostgresDatabase(postgres, name);
    }

    /**
     * A new database on the shared MariaDB server, which starts now if it is not running yet; skips the calling tests
     * when MariaDB is not installed. The server stops itself when the JVM exits.
     */
    static synchronized MariaDbDatabase mariaDbDatabase(String hint) {
        if (mariadb == null) {
            try {
                mariadb = MariaDbServer.start("lease_shared");
            }
            catch (IOException ex) {
                throw new UncheckedIOException("the shared MariaDB server did not start", ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the shared MariaDB server started", ex);
            }
        }
        String name = uniqueName(hint);
        create(mariadb.dataSource(), name);
        return new MariaDbDatabase(mariadb, name);
    }

    /**
     * {@code hint} (a test class's name, say) in lower case with every other character than a letter or digit made
     * {@code _}, cut to {@value #HINT_LENGTH} characters, then {@code _} and a number no other database of this JVM
     * has.
     */
    static String uniqueName(String hint) {
        String base = hint.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_");
        if (base.isEmpty() || !Character.isLetter(base.charAt(0))) {
            base = "db_" + base;
        }
        base = base.substring(0, Math.min(base.length(), HINT_LENGTH));
        return validated(base + "_" + DATABASES.incrementAndGet());
    }

    /** The name itself when both servers take it unquoted; it goes into DDL, which takes no bind parameter. */
    static String validated(String name) {
        if (!DATABASE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("Database name '" + name + "' is not " + DATABASE_NAME.pattern()
                    + ": pass a hint that starts with a letter, or a shorter one");
        }
        return name;
    }

    private static void create(DataSource admin, String name) {
        try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + validated(name));
        }
        catch (SQLException ex) {
            throw new IllegalStateException("CREATE DATABASE " + name + " failed on the shared server", ex);
        }
    }
}
