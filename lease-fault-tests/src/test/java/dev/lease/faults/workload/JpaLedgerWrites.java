package dev.lease.faults.workload;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.faults.mutants.Mutant;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.FenceColumn;
import dev.lease.fence.jpa.MutantFenceRule;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * The JPA workload of a {@link Ledger}: each write goes through Hibernate, in one transaction, as an application's
 * would: the fenced entity of the resource is updated by dirty checking (the {@link FenceColumn} takes the token of the
 * writer's lease from its thread) and the write is logged as a new entity; a refusal rolls both back. Under the fence
 * mutant the session factory gets a fence rule without the comparison.
 */
final class JpaLedgerWrites implements Ledger.Writes {

    /** The fenced entity: one row per resource, counting the writes it took. */
    @Entity(name = "FaultJpaRow")
    @Table(name = "fault_jpa_row")
    static class Row {
        @Id
        String resource;
        long writes;
        @FenceColumn
        long fence;
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

    JpaLedgerWrites(String jdbcUrl, String resource) {
        Mutant mutant = Mutant.active();
        this.factory = FACTORIES.computeIfAbsent(jdbcUrl + " " + mutant.id, key -> build(jdbcUrl, mutant));
        this.resource = resource;
    }

    private static SessionFactory build(String jdbcUrl, Mutant mutant) {
        Configuration configuration = new Configuration().addAnnotatedClass(Row.class).addAnnotatedClass(Entry.class)
                .setProperty("hibernate.connection.url", jdbcUrl).setProperty("hibernate.hbm2ddl.auto", "none");
        if (mutant == Mutant.FENCE) {
            configuration.getProperties().put(MutantFenceRule.PROPERTY, MutantFenceRule.withoutComparison());
        }
        return configuration.buildSessionFactory();
    }

    /** Creates the fenced row's table if needed, and the row of {@code resource} afresh at fence 0. */
    static void reset(JdbcTemplate jdbc, String resource) {
        jdbc.execute("CREATE TABLE IF NOT EXISTS fault_jpa_row (resource VARCHAR(200) PRIMARY KEY, writes BIGINT NOT NULL,"
                + " fence BIGINT NOT NULL)");
        jdbc.update("DELETE FROM fault_jpa_row WHERE resource = ?", resource);
        jdbc.update("INSERT INTO fault_jpa_row (resource, writes, fence) VALUES (?, 0, 0)", resource);
    }

    @Override
    public boolean write(long token, long writeId) {
        try (Session session = factory.openSession()) {
            Transaction tx = session.beginTransaction();
            try {
                session.find(Row.class, resource).writes++;
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

    private static boolean stale(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof StaleTokenException) {
                return true;
            }
        }
        return false;
    }
}
