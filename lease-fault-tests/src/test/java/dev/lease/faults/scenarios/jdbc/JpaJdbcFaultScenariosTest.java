package dev.lease.faults.scenarios.jdbc;

import org.junit.jupiter.api.Test;

import dev.lease.faults.workload.Ledger;

/**
 * The JPA workload on JDBC leases (PostgreSQL): the frozen-store-link scenario with its ledger written through a
 * fenced Hibernate entity ({@code JpaLedgerWrites}) instead of JdbcFence: updating the entity's row, and inserting
 * and deleting it again, so that the stale write is an insert of an id a newer token deleted.
 */
class JpaJdbcFaultScenariosTest extends JdbcScenarios {

    @Test
    void frozenStoreLinkWithJpaWrites() throws Exception {
        JdbcFaultScenariosTest.frozenLink("jpa-jdbc-frozen-store-link", "jdbc (PostgreSQL), JPA ledger",
                "jpa-jdbc-frozen-link", lease -> Ledger.jpa(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }

    @Test
    void frozenStoreLinkWithJpaDeleteThenStaleInsert() throws Exception {
        JdbcFaultScenariosTest.frozenLink("jpa-jdbc-frozen-store-link-delete-insert",
                "jdbc (PostgreSQL), JPA ledger (insert after delete)", "jpa-jdbc-frozen-link-tombstone",
                lease -> Ledger.jpaInsertThenDelete(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }
}
