package dev.lease.fence.jpa;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.OptionalLong;

import org.hibernate.engine.spi.SharedSessionContractImplementor;

import dev.lease.sql.FenceSql;
import dev.lease.sql.SqlDialect;

/**
 * The high-water marks of deleted fenced rows: a row of {@code lease_fence} per deleted entity, keyed like the
 * entity's resource ({@code Invoice#42}), with the highest token that deleted it. A delete raises it in its own
 * transaction; an insert of an id whose row is gone reads it under a lock, so that a holder older than the delete
 * cannot bring the row back. The statements are lease-jdbc's ({@link FenceSql}), the same {@code JdbcFence} uses.
 */
final class Tombstones {

    private static final String READ = FenceSql.positional(FenceSql.READ);
    private static final String ADVANCE = FenceSql.positional(FenceSql.ADVANCE);

    private final SqlDialect dialect;
    private final IdleTimeout idle;
    private final String insert;

    private Tombstones(IdleTimeout idle) {
        this.dialect = idle.dialect();
        this.idle = idle;
        this.insert = FenceSql.positional(FenceSql.insertIfAbsent(dialect));
    }

    /** The tombstones on the database of {@code idle}, whose locking statements bound the idle time first. */
    static Tombstones on(IdleTimeout idle) {
        return new Tombstones(idle);
    }

    /** The bound on the idle time of the transactions that lock a fenced row. */
    IdleTimeout idle() {
        return idle;
    }

    /** The mark a delete left for {@code resource}, read under a row lock until the transaction ends. */
    OptionalLong lockAndRead(SharedSessionContractImplementor session, String resource) {
        return session.doReturningWork(connection -> {
            try (PreparedStatement statement = prepare(connection, READ)) {
                statement.setString(1, resource);
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
                }
            }
            catch (SQLException ex) {
                throw unusable(resource, ex);
            }
        });
    }

    /**
     * Raises the mark of {@code resource} to {@code fence}, creating it if absent; a higher mark stays as it is. The
     * caller holds the lock of the entity's row, so no other delete of the same id runs meanwhile.
     */
    void keep(SharedSessionContractImplementor session, String resource, long fence) {
        session.doWork(connection -> {
            try {
                idle.apply(connection);
                if (advance(connection, resource, fence) == 0 && insert(connection, resource, fence) == 0) {
                    // Present with a higher mark (an unfenced re-insert left a lower row fence), or just created by a
                    // transaction this one waited for: moved if it is lower, kept otherwise.
                    advance(connection, resource, fence);
                }
            }
            catch (SQLException ex) {
                throw unusable(resource, ex);
            }
        });
    }

    private PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        idle.apply(connection);
        return connection.prepareStatement(sql);
    }

    private static int advance(Connection connection, String resource, long fence) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(ADVANCE)) {
            statement.setLong(1, fence);
            statement.setString(2, resource);
            statement.setLong(3, fence);
            return statement.executeUpdate();
        }
    }

    private int insert(Connection connection, String resource, long fence) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(insert)) {
            statement.setString(1, resource);
            statement.setLong(2, fence);
            if (dialect.insertBindsKeyAgain()) {
                statement.setString(3, resource);
            }
            return statement.executeUpdate();
        }
        catch (SQLException ex) {
            // H2's insert-unless-present can still meet a concurrent insert of the key; the statement alone failed.
            if (ex.getSQLState() != null && ex.getSQLState().startsWith("23")) {
                return 0;
            }
            throw ex;
        }
    }

    private static IllegalStateException unusable(String resource, SQLException ex) {
        return new IllegalStateException("The tombstone of " + resource + " (the fence a deleted @FenceColumn entity "
                + "keeps) could not be read or written in table " + FenceSql.TABLE + ": " + ex.getMessage()
                + ". Fenced JPA entities keep the fence of deleted rows there: create it with the DDL in "
                + FenceSql.SCHEMA_SCRIPTS + " (lease-jdbc), or set lease.fence.initialize-schema: always.", ex);
    }
}
