package dev.lease.fence.jpa;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.OptionalLong;

import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

import dev.lease.FencingToken;
import dev.lease.fence.StaleTokenException;

/**
 * Where one fenced entity keeps its fence, as its persister maps it, and the one statement that reads it under a row
 * lock. The identifiers come from Hibernate's mapping; the id travels as a bind parameter, typed by the mapping.
 */
final class FencedRow {

    final String entity;
    final String table;
    final int index;
    private final String idColumn;
    private final String fenceColumn;
    private final String lockAndRead;
    private final String raise;

    private FencedRow(String entity, String table, String idColumn, String fenceColumn, int index, String forUpdate) {
        this.entity = entity;
        this.table = table;
        this.idColumn = idColumn;
        this.fenceColumn = fenceColumn;
        this.index = index;
        this.lockAndRead = "select " + fenceColumn + " from " + table + " where " + idColumn + "=?" + forUpdate;
        this.raise = "update " + table + " set " + fenceColumn + "=? where " + idColumn + "=?";
    }

    static FencedRow of(EntityPersister persister, String property, String forUpdate) {
        String[] names = persister.getPropertyNames();
        int index = -1;
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(property)) {
                index = i;
            }
        }
        if (index < 0) {
            throw new IllegalStateException("The @FenceColumn attribute '" + property + "' of entity "
                    + persister.getEntityName() + " is not among its persistent attributes");
        }
        return new FencedRow(persister.getJpaEntityName(), persister.getRootTableName(),
                persister.getIdentifierColumnNames()[0], persister.getPropertyColumnNames(property)[0], index,
                forUpdate);
    }

    /**
     * The row's fence, read with a lock that holds until the session's transaction ends; empty when the row does not
     * exist. A row written before it had a fence (NULL) counts as fence 0. The transaction's idle time is bounded
     * first, on the same connection: the lock must not outlive a holder stopped inside the transaction.
     */
    OptionalLong lockAndRead(SharedSessionContractImplementor session, EntityPersister persister, Object id,
            IdleTimeout idle) {
        return session.doReturningWork(connection -> {
            idle.apply(connection);
            try (PreparedStatement statement = connection.prepareStatement(lockAndRead)) {
                persister.getIdentifierType().nullSafeSet(statement, id, 1, session);
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
                }
            }
        });
    }

    /**
     * Writes {@code token} into the row's fence, which {@link #lockAndRead} locked and checked in this transaction:
     * a write of the entity that is no statement on its row (a collection change) moves its fence all the same.
     */
    void raise(SharedSessionContractImplementor session, EntityPersister persister, Object id, long token) {
        session.doWork(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(raise)) {
                statement.setLong(1, token);
                persister.getIdentifierType().nullSafeSet(statement, id, 2, session);
                statement.executeUpdate();
            }
        });
    }

    String resource(Object id) {
        return entity + "#" + id;
    }

    StaleTokenException stale(Object id, FencingToken token, long current) {
        return new StaleTokenException(resource(id), token, current, table, fenceColumn, idColumn, id);
    }
}
