package dev.lease.faults.workload;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.faults.mutants.Mutant;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.FenceColumn;
import dev.lease.fence.jpa.MutantFenceRule;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.Table;

/**
 * The JPA workload of a {@link Ledger}: each write goes through Hibernate, in one transaction, as an application's
 * would: the fenced entity of the resource is written in the way its {@link Shape} says (the {@link FenceColumn} takes
 * the token of the writer's lease from its thread) and the write is logged as a new entity; a refusal rolls both back.
 * Under the fence mutant the session factory gets a fence rule without the comparison.
 */
final class JpaLedgerWrites implements Ledger.Writes {

    /** How a write changes the resource's fenced entity. */
    enum Shape {
        /** Its row is updated by dirty checking. */
        ROW,
        /** Only its element collection changes (one more write id), which Hibernate writes without its row. */
        COLLECTION,
        /**
         * It is inserted, then deleted: every write finds the row gone, deleted by the write before it, so the stale
         * write is an insert of an id a newer token deleted, which only the delete's tombstone can refuse.
         */
        INSERT_THEN_DELETE
    }

    /** The fenced entity: one row per resource, counting the writes it took. */
    @Entity(name = "FaultJpaRow")
    @Table(name = "fault_jpa_row")
    static class Row {
        @Id
        String resource;
        long writes;
        @FenceColumn
        long fence;
        @ElementCollection
        @CollectionTable(name = "fault_jpa_row_write", joinColumns = @JoinColumn(name = "resource"))
        @Column(name = "write_id")
        Set<Long> writeIds = new HashSet<>();

        Row() {
        }

        Row(String resource) {
            this.resource = resource;
        }
    }

    /** A logged write, the row {@link Ledger#accepted()} reads. */
    @Entity(name = "FaultLedgerEntry")
    @Table(name = "fault_ledger")
    static class Entry {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        Long seq;
        String resource;
        long token;
        @Column(name = "write_id")
        long writeId;

        Entry() {
        }

        Entry(String resource, long token, long writeId) {
            this.resource = resource;
            this.token = token;
            this.writeId = writeId;
        }
    }

    private static final Map<String, SessionFactory> FACTORIES = new ConcurrentHashMap<>();

    private final SessionFactory factory;
    private final String resource;
    private final Shape shape;

    JpaLedgerWrites(String jdbcUrl, String resource, Shape shape) {
        Mutant mutant = Mutant.active();
        this.factory = FACTORIES.computeIfAbsent(jdbcUrl + " " + mutant.id, key -> build(jdbcUrl, mutant));
        this.resource = resource;
        this.shape = shape;
    }

    private static SessionFactory build(String jdbcUrl, Mutant mutant) {
        Configuration configuration = new Configuration().addAnnotatedClass(Row.class).addAnnotatedClass(Entry.class)
                .setProperty("hibernate.connection.url", jdbcUrl).setProperty("hibernate.hbm2ddl.auto", "none");
        if (mutant == Mutant.FENCE) {
            configuration.getProperties().put(MutantFenceRule.PROPERTY, MutantFenceRule.withoutComparison());
        }
        return configuration.buildSessionFactory();
    }

    /**
     * Creates the fenced row's tables if needed, and the row of {@code resource} afresh at fence 0 (none, with no
     * tombstone, for {@link Shape#INSERT_THEN_DELETE}).
     */
    static void reset(JdbcTemplate jdbc, String resource, Shape shape) {
        jdbc.execute("CREATE TABLE IF NOT EXISTS fault_jpa_row (resource VARCHAR(200) PRIMARY KEY, writes BIGINT NOT NULL,"
                + " fence BIGINT NOT NULL)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS fault_jpa_row_write (resource VARCHAR(200) NOT NULL REFERENCES "
                + "fault_jpa_row (resource), write_id BIGINT NOT NULL)");
        jdbc.update("DELETE FROM fault_jpa_row_write WHERE resource = ?", resource);
        jdbc.update("DELETE FROM fault_jpa_row WHERE resource = ?", resource);
        jdbc.update("DELETE FROM " + JdbcFence.TABLE + " WHERE resource = ?", "FaultJpaRow#" + resource);
        if (shape != Shape.INSERT_THEN_DELETE) {
            jdbc.update("INSERT INTO fault_jpa_row (resource, writes, fence) VALUES (?, 0, 0)", resource);
        }
    }

    @Override
    public boolean write(long token, long writeId) {
        try (Session session = factory.openSession()) {
            Transaction tx = session.beginTransaction();
            try {
                change(session, writeId);
                session.persist(new Entry(resource, token, writeId));
                session.flush();
                tx.commit();
                return true;
            }
            catch (RuntimeException ex) {
                if (tx.isActive()) {
                    tx.rollback();
                }
                if (stale(ex)) {
                    return false;
                }
                throw ex;
            }
        }
    }

    private void change(Session session, long writeId) {
        switch (shape) {
            case ROW -> session.find(Row.class, resource).writes++;
            case COLLECTION -> session.find(Row.class, resource).writeIds.add(writeId);
            case INSERT_THEN_DELETE -> {
                Row row = new Row(resource);
                session.persist(row);
                session.flush();
                session.remove(row);
            }
        }
    }

    private static boolean stale(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof StaleTokenException) {
                return true;
            }
        }
        return false;
    }
}
