package dev.lease.jdbc;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.Map;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.jdbc.JdbcLeaseBackend.Tokens;
import dev.lease.sql.SqlDialect;
import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.PostgresServer;

/**
 * The databases, token modes and users the JDBC contract runs with: H2, a real PostgreSQL and a real MariaDB server,
 * each with per-name tokens and with {@code lease.jdbc.token: shared} (idle rows deleted, in a table of its own), and
 * on the servers as a user with only the grants docs/security.md gives the lease user. On MariaDB the second
 * application instance's driver counts changed rows rather than matched ones ({@code useAffectedRows=true}), so the
 * suite runs with both settings. {@link #start()} gives the variant a database of its own: a new one on the server its
 * test JVM shares, but a server of its own where the variant creates users or roles (server-wide); the test closes
 * it.
 */
enum JdbcVariant {

    /** H2 in this JVM, with a schema-qualified table; two DataSources stand for two application instances. */
    H2(Tokens.PER_NAME) {
        @Override
        TestDatabase start() {
            JdbcDataSource first = h2("jdbc-lease-contract");
            new JdbcTemplate(first).execute("CREATE SCHEMA IF NOT EXISTS leases");
            new JdbcLeaseBackend(first, "leases.lease_lock").createSchema();
            return TestDatabase.inThisJvm(first, h2("jdbc-lease-contract"), "leases.lease_lock");
        }
    },

    /** A real PostgreSQL server. */
    POSTGRESQL(Tokens.PER_NAME) {
        @Override
        TestDatabase start() throws Exception {
            PostgresDatabase postgres = PostgresDatabase.create(name());
            new JdbcLeaseBackend(postgres.dataSource()).createSchema();
            return asSuperuser(postgres, JdbcLeaseBackend.DEFAULT_TABLE);
        }
    },

    /** A real MariaDB server (the MySQL scripts and dialect). */
    MARIADB(Tokens.PER_NAME) {
        @Override
        TestDatabase start() throws Exception {
            MariaDbDatabase mariadb = sharedMariaDb(name());
            new JdbcLeaseBackend(mariadb.dataSource()).createSchema();
            return asRoot(mariadb, JdbcLeaseBackend.DEFAULT_TABLE);
        }
    },

    /** Shared tokens on H2. */
    H2_SHARED_TOKENS(Tokens.SHARED) {
        @Override
        TestDatabase start() {
            JdbcDataSource first = h2("jdbc-lease-shared");
            createSharedTokenSchema(first);
            return TestDatabase.inThisJvm(first, h2("jdbc-lease-shared"), SHARED_TABLE);
        }
    },

    /** Shared tokens on a real PostgreSQL server. */
    POSTGRESQL_SHARED_TOKENS(Tokens.SHARED) {
        @Override
        TestDatabase start() throws Exception {
            PostgresDatabase postgres = PostgresDatabase.create(name());
            createSharedTokenSchema(postgres.dataSource());
            return asSuperuser(postgres, SHARED_TABLE);
        }
    },

    /** Shared tokens on a real MariaDB server, where a token is drawn with {@code LAST_INSERT_ID(expr)}. */
    MARIADB_SHARED_TOKENS(Tokens.SHARED) {
        @Override
        TestDatabase start() throws Exception {
            MariaDbDatabase mariadb = sharedMariaDb(name());
            createSharedTokenSchema(mariadb.dataSource());
            return asRoot(mariadb, SHARED_TABLE);
        }
    },

    /**
     * A PostgreSQL role with only the grants docs/security.md gives the lease user ({@code initialize-schema: never}:
     * the table is created by an administrator): SELECT, INSERT, UPDATE and DELETE on {@code lease_lock}, nothing
     * else. LISTEN/NOTIFY needs no grant.
     */
    POSTGRESQL_LEAST_PRIVILEGE(Tokens.PER_NAME) {
        @Override
        TestDatabase start() throws Exception {
            return withPostgres(postgres -> {
                DataSource admin = postgres.dataSource();
                JdbcTemplate superuser = new JdbcTemplate(admin);
                new JdbcLeaseBackend(admin).createSchema();
                superuser.execute("CREATE ROLE leaser LOGIN");
                superuser.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC");
                superuser.execute("GRANT USAGE ON SCHEMA public TO leaser");
                superuser.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON lease_lock TO leaser");
                DataSource leaser = postgres.dataSource(Map.of("user", "leaser"));
                return TestDatabase.onServer(postgres, leaser, leaser, JdbcLeaseBackend.DEFAULT_TABLE,
                        SqlDialect.POSTGRESQL, postgres.port(), proxy -> new SingleConnectionDataSource(
                                "jdbc:postgresql://" + proxy.address() + "/postgres", "leaser", "", true))
                        .administeredBy(admin, table -> superuser.execute(
                                "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO leaser"));
            });
        }
    },

    /**
     * A MariaDB user with only the grants docs/security.md gives the lease user ({@code initialize-schema: never}):
     * SELECT, INSERT, UPDATE and DELETE on {@code lease_lock}, nothing else.
     */
    MARIADB_LEAST_PRIVILEGE(Tokens.PER_NAME) {
        @Override
        TestDatabase start() throws Exception {
            return withMariaDb(mariadb -> {
                DataSource admin = mariadb.dataSource();
                new JdbcLeaseBackend(admin).createSchema();
                JdbcTemplate root = new JdbcTemplate(admin);
                root.execute("CREATE USER 'leaser'@'%' IDENTIFIED BY 'leaser-pw'");
                root.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON leases.lease_lock TO 'leaser'@'%'");
                DataSource leaser = mariadb.dataSourceAs("leaser", "leaser-pw");
                return TestDatabase.onServer(mariadb, leaser, leaser, JdbcLeaseBackend.DEFAULT_TABLE,
                        SqlDialect.MYSQL, mariadb.port(), proxy -> new SingleConnectionDataSource(
                                "jdbc:mariadb://127.0.0.1:" + proxy.port() + "/leases?user=leaser&password=leaser-pw",
                                true))
                        .administeredBy(admin, table -> root.execute(
                                "GRANT SELECT, INSERT, UPDATE, DELETE ON leases." + table + " TO 'leaser'@'%'"));
            });
        }
    };

    /** The table of the shared-token variants, used by this mode alone. */
    static final String SHARED_TABLE = "lease_shared";

    /** With shared tokens, rows free for this long are deleted by {@link JdbcLeaseBackend#deleteIdleRows()}. */
    static final Duration IDLE = Duration.ofMillis(1);

    private final Tokens tokens;

    JdbcVariant(Tokens tokens) {
        this.tokens = tokens;
    }

    /** Starts the variant's database with the lease table in place; skips the variant when MariaDB is not installed. */
    abstract TestDatabase start() throws Exception;

    /**
     * The backend of one application instance, in this variant's token mode. With shared tokens, idle rows are
     * deleted only when a test says so: the backend's own thread would delete what a test is looking at.
     */
    JdbcLeaseBackend backend(DataSource dataSource, String table) {
        if (tokens == Tokens.PER_NAME) {
            return new JdbcLeaseBackend(dataSource, table);
        }
        JdbcLeaseBackend backend = new JdbcLeaseBackend(dataSource, table, Tokens.SHARED, IDLE);
        backend.sweepEvery(Duration.ofHours(1));
        return backend;
    }

    /**
     * Creates the shared-token table as it is with deletion on, so that the index on expires_at is created too;
     * twice, since startup runs it every time.
     */
    private static void createSharedTokenSchema(DataSource dataSource) {
        for (int i = 0; i < 2; i++) {
            new JdbcLeaseBackend(dataSource, SHARED_TABLE, Tokens.SHARED, Duration.ofHours(1)).createSchema();
        }
    }

    private static JdbcDataSource h2(String database) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1");
        ds.setUser("sa");
        return ds;
    }

    /** The superuser on both instances. */
    private static TestDatabase asSuperuser(PostgresDatabase postgres, String table) {
        return TestDatabase.onSharedServer(postgres, postgres.dataSource(), postgres.dataSource(Map.of()), table,
                SqlDialect.POSTGRESQL, postgres.port(), proxy -> new SingleConnectionDataSource(
                        "jdbc:postgresql://" + proxy.address() + "/" + postgres.name(), "postgres", "", true));
    }

    /** Root on both instances, the second one's driver counting changed rows ({@code useAffectedRows=true}). */
    private static TestDatabase asRoot(MariaDbDatabase mariadb, String table) {
        return TestDatabase.onSharedServer(mariadb, mariadb.dataSource(), mariadb.dataSource("useAffectedRows=true"),
                table, SqlDialect.MYSQL, mariadb.port(), proxy -> new SingleConnectionDataSource(
                        "jdbc:mariadb://127.0.0.1:" + proxy.port() + "/" + mariadb.name() + "?user=root", true));
    }

    /** A database on the JVM's MariaDB server; skips the variant when MariaDB is not installed. */
    private static MariaDbDatabase sharedMariaDb(String hint) {
        assumeTrue(MariaDbServer.installed(), MariaDbServer.NOT_INSTALLED);
        return MariaDbDatabase.create(hint);
    }

    private static TestDatabase withPostgres(Setup<PostgresServer> setup) throws Exception {
        return prepared(PostgresServer.start(), setup);
    }

    private static TestDatabase withMariaDb(Setup<MariaDbServer> setup) throws Exception {
        assumeTrue(MariaDbServer.installed(), MariaDbServer.NOT_INSTALLED);
        return prepared(MariaDbServer.start("leases"), setup);
    }

    /** Runs {@code setup} on a server just started, and stops the server again if the setup fails. */
    private static <S extends AutoCloseable> TestDatabase prepared(S server, Setup<S> setup) throws Exception {
        try {
            return setup.on(server);
        }
        catch (Exception | Error ex) {
            try {
                server.close();
            }
            catch (Exception suppressed) {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
    }

    /** What a variant makes of its server: the lease table, users and grants, and the DataSources of the test. */
    @FunctionalInterface
    private interface Setup<S> {

        TestDatabase on(S server) throws Exception;
    }
}
