package dev.lease.fence;

/**
 * The statements on the {@code lease_fence} table, one owner for {@link JdbcFence} and {@link R2dbcFence}. Written
 * with named parameters ({@code :token}, {@code :resource}), which Spring's R2DBC {@code DatabaseClient} binds by
 * name; {@link #positional} gives the JDBC form, whose {@code ?} are bound in the order the names appear.
 */
final class FenceSql {

    static final String ADVANCE = "UPDATE " + JdbcFence.TABLE
            + " SET fence = :token WHERE resource = :resource AND fence <= :token";

    static final String READ = "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = :resource FOR UPDATE";

    private FenceSql() {
    }

    /**
     * Inserts a fence row unless it exists, without aborting the caller's transaction.
     *
     * @param platform {@code postgresql}, {@code mysql} or {@code h2} ({@code dev.lease.jdbc.SqlPlatforms})
     */
    static String insertIfAbsent(String platform) {
        return switch (platform) {
            case "postgresql" -> "INSERT INTO " + JdbcFence.TABLE + " (resource, fence) VALUES (:resource, :token)"
                    + " ON CONFLICT (resource) DO NOTHING";
            case "mysql" -> "INSERT IGNORE INTO " + JdbcFence.TABLE + " (resource, fence) VALUES (:resource, :token)";
            case "h2" -> "INSERT INTO " + JdbcFence.TABLE + " (resource, fence) SELECT :resource, :token FROM DUAL"
                    + " WHERE NOT EXISTS (SELECT 1 FROM " + JdbcFence.TABLE + " WHERE resource = :resource)";
            default -> throw new IllegalStateException("No fence statements for " + platform);
        };
    }

    /** The JDBC form of a statement: each named parameter becomes {@code ?}, to bind in order of appearance. */
    static String positional(String named) {
        return named.replaceAll(":[a-z]+", "?");
    }
}
