package dev.lease.jdbc;


/**
 * What differs between the supported databases: how to read the database clock, how to add milliseconds to it,
 * how to insert a row unless it already exists without failing (a failed statement aborts a PostgreSQL
 * transaction), and how to draw a shared token in one statement.
 */
enum Dialect {

    POSTGRESQL("postgresql", "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP + CAST(? AS DOUBLE PRECISION) * INTERVAL '1 millisecond'",
            "INSERT INTO %1$s (name, owner, token, expires_at) VALUES (?, NULL, %2$s, CURRENT_TIMESTAMP)"
                    + " ON CONFLICT (name) DO NOTHING", false,
            "UPDATE %1$s SET token = token + 1 WHERE name = ? RETURNING token", null,
            "INSERT INTO %1$s (name, owner, token, expires_at) SELECT ?, NULL, COALESCE(MAX(token), 0),"
                    + " CURRENT_TIMESTAMP FROM %1$s WHERE %2$s ON CONFLICT (name) DO NOTHING", false,
            // No DELETE ... LIMIT: the rows are picked and locked by the subquery, skipping any a grant holds now.
            "DELETE FROM %1$s WHERE name IN (SELECT name FROM %1$s WHERE %2$s LIMIT ? FOR UPDATE SKIP LOCKED)"),

    // UTC into a DATETIME column: CURRENT_TIMESTAMP is session-local time, which a daylight saving change skips or
    // repeats, so a lease computed from it can be stored an hour off or fail to be stored at all.
    MYSQL("mysql", "UTC_TIMESTAMP(6)",
            "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))",
            "INSERT IGNORE INTO %1$s (name, owner, token, expires_at) VALUES (?, NULL, %2$s, UTC_TIMESTAMP(6))", false,
            // No UPDATE ... RETURNING: LAST_INSERT_ID(expr) keeps the new value for this connection alone.
            "UPDATE %1$s SET token = LAST_INSERT_ID(token + 1) WHERE name = ?", "SELECT LAST_INSERT_ID()",
            "INSERT IGNORE INTO %1$s (name, owner, token, expires_at) SELECT ?, NULL, COALESCE(MAX(token), 0),"
                    + " UTC_TIMESTAMP(6) FROM %1$s WHERE %2$s", false,
            "DELETE FROM %1$s WHERE %2$s LIMIT ?"),

    H2("h2", "CURRENT_TIMESTAMP",
            "DATEADD(MILLISECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP)",
            "INSERT INTO %1$s (name, owner, token, expires_at) SELECT ?, NULL, %2$s, CURRENT_TIMESTAMP FROM DUAL"
                    + " WHERE NOT EXISTS (SELECT 1 FROM %1$s WHERE name = ?)", true,
            "SELECT token FROM FINAL TABLE (UPDATE %1$s SET token = token + 1 WHERE name = ?)", null,
            "INSERT INTO %1$s (name, owner, token, expires_at) SELECT ?, NULL, COALESCE(MAX(token), 0),"
                    + " CURRENT_TIMESTAMP FROM %1$s WHERE %2$s AND NOT EXISTS (SELECT 1 FROM %1$s WHERE name = ?)", true,
            "DELETE FROM %1$s WHERE %2$s FETCH FIRST ? ROWS ONLY");

    /** Suffix of the schema script, {@code schema-<platform>.sql}. */
    final String platform;

    /** The database's current time. */
    final String now;

    /** The database's current time plus one bound number of milliseconds. */
    final String nowPlusMillis;

    /**
     * Inserts a free row for one bound name unless it exists; table as {@code %1$s}, its token as {@code %2$s}: 0, or
     * one more bound parameter right after the first name.
     */
    final String insertIfAbsent;

    /** Whether {@link #insertIfAbsent} binds the name twice. */
    final boolean insertBindsNameTwice;

    /**
     * Increments the shared token counter row (name bound) and, in the same statement, returns its new value; or,
     * with {@link #readDrawnToken}, makes the new value readable by the next statement on the same connection alone.
     * One statement either way: a counter row locked across a round trip would stall every grant of every name.
     */
    final String drawToken;

    /** Reads what {@link #drawToken} left for this connection; null when {@link #drawToken} returns it itself. */
    final String readDrawnToken;

    /**
     * Inserts a row (name bound) unless it exists, starting at the highest token among the rows matching a condition
     * ({@code %2$s}), read by the same statement. For the shared token counter row, every row: switching an existing
     * table to shared tokens keeps every name's tokens rising. For a name's own row, the counter row alone (a lookup
     * by key, never a scan of the table): a name whose row shared tokens deleted never restarts below a token they
     * issued.
     */
    final String insertCounter;

    /** Whether {@link #insertCounter} binds the name twice. */
    final boolean insertCounterBindsNameTwice;

    /**
     * Deletes at most a bound number of the rows matching a condition; table as {@code %1$s}, the condition (with
     * its own bind parameters, bound first) as {@code %2$s}.
     */
    final String deleteIdle;

    Dialect(String platform, String now, String nowPlusMillis, String insertIfAbsent, boolean insertBindsNameTwice,
            String drawToken, String readDrawnToken, String insertCounter, boolean insertCounterBindsNameTwice,
            String deleteIdle) {
        this.platform = platform;
        this.now = now;
        this.nowPlusMillis = nowPlusMillis;
        this.insertIfAbsent = insertIfAbsent;
        this.insertBindsNameTwice = insertBindsNameTwice;
        this.drawToken = drawToken;
        this.readDrawnToken = readDrawnToken;
        this.insertCounter = insertCounter;
        this.insertCounterBindsNameTwice = insertCounterBindsNameTwice;
        this.deleteIdle = deleteIdle;
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
