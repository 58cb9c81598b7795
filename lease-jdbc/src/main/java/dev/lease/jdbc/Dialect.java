package dev.lease.jdbc;


/**
 * What differs between the supported databases: how to read the database clock, how to add milliseconds to it,
 * and how to insert a row unless it already exists without failing (a failed statement aborts a PostgreSQL
 * transaction).
 */
enum Dialect {

    POSTGRESQL("postgresql", "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP + CAST(? AS DOUBLE PRECISION) * INTERVAL '1 millisecond'",
            "INSERT INTO %1$s (name, owner, token, expires_at) VALUES (?, NULL, 0, CURRENT_TIMESTAMP)"
                    + " ON CONFLICT (name) DO NOTHING", false),

    // UTC into a DATETIME column: CURRENT_TIMESTAMP is session-local time, which a daylight saving change skips or
    // repeats, so a lease computed from it can be stored an hour off or fail to be stored at all.
    MYSQL("mysql", "UTC_TIMESTAMP(6)",
            "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))",
            "INSERT IGNORE INTO %1$s (name, owner, token, expires_at) VALUES (?, NULL, 0, UTC_TIMESTAMP(6))", false),

    H2("h2", "CURRENT_TIMESTAMP",
            "DATEADD(MILLISECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP)",
            "INSERT INTO %1$s (name, owner, token, expires_at) SELECT ?, NULL, 0, CURRENT_TIMESTAMP FROM DUAL"
                    + " WHERE NOT EXISTS (SELECT 1 FROM %1$s WHERE name = ?)", true);

    /** Suffix of the schema script, {@code schema-<platform>.sql}. */
    final String platform;

    /** The database's current time. */
    final String now;

    /** The database's current time plus one bound number of milliseconds. */
    final String nowPlusMillis;

    /** Inserts a free row for one bound name unless it exists; table as {@code %1$s}. */
    final String insertIfAbsent;

    /** Whether {@link #insertIfAbsent} binds the name twice. */
    final boolean insertBindsNameTwice;

    Dialect(String platform, String now, String nowPlusMillis, String insertIfAbsent, boolean insertBindsNameTwice) {
        this.platform = platform;
        this.now = now;
        this.nowPlusMillis = nowPlusMillis;
        this.insertIfAbsent = insertIfAbsent;
        this.insertBindsNameTwice = insertBindsNameTwice;
    }

    /**
     * The dialect for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}.
     *
     * @throws IllegalStateException for databases the backend does not support
     */
    static Dialect forProductName(String product) {
        String platform = SqlPlatforms.of(product).orElseThrow(() -> new IllegalStateException(
                "The JDBC lease backend supports PostgreSQL, MySQL, MariaDB and H2, but the DataSource is '" + product
                        + "'. Use another lease backend (lease.backend: zookeeper)."));
        for (Dialect dialect : values()) {
            if (dialect.platform.equals(platform)) {
                return dialect;
            }
        }
        throw new IllegalStateException("No dialect for " + platform);
    }
}
