package dev.lease.fence;

import dev.lease.sql.SqlDialect;

/**
 * The statements on the {@code lease_fence} table, one owner for {@link JdbcFence} and {@link R2dbcFence}. Written
 * with named parameters ({@code :token}, {@code :resource}), which Spring's R2DBC {@code DatabaseClient} binds by
 * name; {@link #positional} gives the JDBC form, whose {@code ?} are bound in the order the names appear.
 */
final class FenceSql {

    static final String ADVANCE = "UPDATE " + JdbcFence.TABLE
            + " SET fence = :token WHERE resource = :resource AND fence <= :token";

    static final String READ = "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = :resource FOR UPDATE";

    /** Reads the table's columns and no row: it exists and can be read. */
    static final String VERIFY = "SELECT resource, fence FROM " + JdbcFence.TABLE + " WHERE 1 = 0";

    private FenceSql() {
    }

    /** Inserts a fence row unless it exists, without aborting the caller's transaction. */
    static String insertIfAbsent(SqlDialect dialect) {
        return dialect.insertUnlessPresent(JdbcFence.TABLE, "resource, fence", ":resource, :token", "resource",
                ":resource");
    }

    /** The DDL that creates the {@code lease_fence} table unless it exists, on this database. */
    static String createTable(SqlDialect dialect) {
        return SqlDialect.readStatement(dialect.script("dev/lease/fence/schema"));
    }

    /** The JDBC form of a statement: each named parameter becomes {@code ?}, to bind in order of appearance. */
    static String positional(String named) {
        return named.replaceAll(":[a-z]+", "?");
    }
}
