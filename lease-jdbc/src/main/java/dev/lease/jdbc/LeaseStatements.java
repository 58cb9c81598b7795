package dev.lease.jdbc;

import java.sql.DatabaseMetaData;

import javax.sql.DataSource;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.util.ClassUtils;

import dev.lease.sql.SqlDialect;

/**
 * The lease table's statements on one database, built once from validated parts: a table name checked by
 * {@code SqlIdentifiers} and the database's {@link SqlDialect}. Every value travels as a bind parameter.
 */
final class LeaseStatements {

    /** Present when the PostgreSQL driver is: releases then notify, and waiters listen. */
    private static final String PG_CONNECTION = "org.postgresql.PGConnection";

    private static final String COLUMNS = "name, owner, token, expires_at";

    final SqlDialect dialect;
    final String table;
    final String grant;
    final String readToken;
    final String renew;
    final String held;
    final String release;
    final String abandon;

    /** A name's free row, starting at the shared counter's token (a lookup by key); binds the name (twice on H2). */
    final String insertIfAbsent;

    /** A name's free row carrying a bound token: binds the name, the token (and on H2 the name again). */
    final String insertIfAbsentWithToken;

    final String take;
    final String setToken;
    final String raiseCounter;
    final String drawToken;

    /** Reads what {@link #drawToken} left for this connection; null when {@link #drawToken} returns it itself. */
    final String readDrawnToken;

    /** The counter row, starting at the table's highest token; binds the counter row's name (twice on H2). */
    final String insertCounter;

    final String deleteIdle;

    /** Releases and notifies the channel in one statement; null but on PostgreSQL with its driver. */
    final String releaseAndNotify;

    /** The channel releases are notified on; null but on PostgreSQL with its driver. */
    final String channel;

    LeaseStatements(SqlDialect dialect, String table, boolean pgDriver) {
        String now = dialect.now();
        String nowPlusMillis = dialect.nowPlusMillis();
        this.dialect = dialect;
        this.table = table;
        this.grant = "UPDATE " + table + " SET owner = ?, token = token + 1, expires_at = " + nowPlusMillis
                + " WHERE name = ? AND (owner IS NULL OR expires_at <= " + now + ")";
        this.readToken = "SELECT token FROM " + table + " WHERE name = ? AND owner = ?";
        this.renew = "UPDATE " + table + " SET expires_at = " + nowPlusMillis
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + now;
        this.held = "SELECT COUNT(*) FROM " + table
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + now;
        this.release = "UPDATE " + table + " SET owner = NULL, expires_at = " + now
                + " WHERE name = ? AND owner = ? AND token = ?";
        this.abandon = "UPDATE " + table + " SET owner = NULL, expires_at = " + now + " WHERE name = ? AND owner = ?";
        // Rows start at the highest token among the rows the condition picks, read by the inserting statement itself.
        String highestToken = "?, NULL, COALESCE(MAX(token), 0), " + now;
        this.insertIfAbsent = dialect.insertSelectUnlessPresent(table, COLUMNS, highestToken,
                "name = '" + TokenCounter.ROW + "'", "name", "?");
        this.insertIfAbsentWithToken = dialect.insertUnlessPresent(table, COLUMNS, "?, NULL, ?, " + now, "name", "?");
        this.take = "UPDATE " + table + " SET owner = ?, expires_at = " + nowPlusMillis
                + " WHERE name = ? AND (owner IS NULL OR expires_at <= " + now + ")";
        // The owner (the request's own attempt id) is this grant's until a later grant takes the row over.
        this.setToken = "UPDATE " + table + " SET token = ? WHERE name = ? AND owner = ? AND token < ?";
        this.raiseCounter = "UPDATE " + table + " SET token = ? WHERE name = ? AND token < ?";
        this.drawToken = dialect.incrementReturning(table, "token", "name = ?");
        this.readDrawnToken = dialect.readIncremented();
        // Every row: switching an existing table to shared tokens keeps every name's tokens rising.
        this.insertCounter = dialect.insertSelectUnlessPresent(table, COLUMNS, highestToken, "1 = 1", "name", "?");
        boolean notifies = dialect == SqlDialect.POSTGRESQL && pgDriver;
        this.channel = notifies ? PgReleaseListener.channel(table) : null;
        this.releaseAndNotify = notifies ? "WITH released AS (UPDATE " + table + " SET owner = NULL, expires_at = "
                + now + " WHERE name = ? AND owner = ? AND token = ? RETURNING name)"
                + " SELECT pg_notify(?, name) FROM released" : null;
        // Binds the counter row's name, the (negative) idle time, and the batch size.
        this.deleteIdle = dialect.deleteAtMost(table, "name", "name <> ? AND expires_at <= " + nowPlusMillis);
    }

    /** The statements of {@code table} on the database {@code dataSource} connects to, which this asks. */
    static LeaseStatements of(DataSource dataSource, String table) {
        return new LeaseStatements(detectDialect(dataSource), table,
                ClassUtils.isPresent(PG_CONNECTION, LeaseStatements.class.getClassLoader()));
    }

    private static SqlDialect detectDialect(DataSource dataSource) {
        String product;
        try {
            product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
        }
        catch (MetaDataAccessException ex) {
            throw new IllegalStateException("Could not tell which database the JDBC lease backend runs on: " + ex, ex);
        }
        return SqlDialect.forProductName(product).orElseThrow(() -> new IllegalStateException(
                "The JDBC lease backend supports PostgreSQL, MySQL, MariaDB and H2, but the DataSource is '" + product
                        + "'. Use another lease backend (lease.backend: zookeeper)."));
    }

    /** Whether the insert statements bind the name once more, last. */
    boolean insertBindsNameTwice() {
        return dialect.insertBindsKeyAgain();
    }

    /** Renews the rows of {@code count} grants (binds the ttl, then as {@link #grantsMatching}) while unexpired. */
    String renewAll(int count) {
        return "UPDATE " + table + " SET expires_at = " + dialect.nowPlusMillis() + " WHERE " + grantsMatching(count)
                + " AND expires_at > " + dialect.now();
    }

    /** The (name, owner, token) of the rows of {@code count} grants still held (binds as {@link #grantsMatching}). */
    String heldOf(int count) {
        return "SELECT name, owner, token FROM " + table + " WHERE " + grantsMatching(count) + " AND expires_at > "
                + dialect.now();
    }

    /**
     * The rows of {@code count} grants: {@code name IN (...)} lets every database look them up by primary key, the
     * OR-chain of bound (name, owner, token) triples (understood by every supported database, unlike row values on
     * some) keeps only the rows still carrying a grant. Binds the names, then the triples.
     */
    private static String grantsMatching(int count) {
        StringBuilder sql = new StringBuilder(count * 48).append("name IN (");
        for (int i = 0; i < count; i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(") AND (");
        for (int i = 0; i < count; i++) {
            sql.append(i == 0 ? "" : " OR ").append("(name = ? AND owner = ? AND token = ?)");
        }
        return sql.append(')').toString();
    }
}
