package dev.lease.sql;

/**
 * The statements on the {@code lease_fence} table, one owner for every writer of it: {@code JdbcFence} and
 * {@code R2dbcFence}, and lease-jpa, which keeps the tombstone of a deleted fenced entity there. Written with named
 * parameters ({@code :token}, {@code :resource}), which Spring's R2DBC {@code DatabaseClient} binds by name;
 * {@link #positional} gives the JDBC form, whose {@code ?} are bound in the order the names appear. Internal, like
 * its package: no contract.
 */
public final class FenceSql {

    /** The fence table ({@code JdbcFence.TABLE}). */
    public static final String TABLE = "lease_fence";

    /** Moves a resource's fence up to {@code :token}; no row changes when it is higher. */
    public static final String ADVANCE = "UPDATE " + TABLE
            + " SET fence = :token WHERE resource = :resource AND fence <= :token";

    /** Reads a resource's fence under a row lock. */
    public static final String READ = "SELECT fence FROM " + TABLE + " WHERE resource = :resource FOR UPDATE";

    /** Reads the table's columns and no row: it exists and can be read. */
    public static final String VERIFY = "SELECT resource, fence FROM " + TABLE + " WHERE 1 = 0";

    /** Where the DDL of the table is, per database ({@link SqlDialect#script}). */
    public static final String SCHEMA_SCRIPTS = "dev/lease/fence/schema-<platform>.sql";

    private FenceSql() {
    }

    /**
     * Inserts a fence row unless it exists, without aborting the caller's transaction; with
     * {@link SqlDialect#insertBindsKeyAgain()} the resource is bound once more, last.
     */
    public static String insertIfAbsent(SqlDialect dialect) {
        return dialect.insertUnlessPresent(TABLE, "resource, fence", ":resource, :token", "resource", ":resource");
    }

    /** The DDL that creates the {@code lease_fence} table unless it exists, on this database. */
    public static String createTable(SqlDialect dialect) {
        return SqlDialect.readStatement(dialect.script("dev/lease/fence/schema"));
    }

    /** The JDBC form of a statement: each named parameter becomes {@code ?}, to bind in order of appearance. */
    public static String positional(String named) {
        return named.replaceAll(":[a-z]+", "?");
    }
}
