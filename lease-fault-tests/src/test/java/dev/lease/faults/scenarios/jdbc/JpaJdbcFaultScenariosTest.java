package dev.lease.faults.scenarios.jdbc;

import org.junit.jupiter.api.Test;

import dev.lease.faults.workload.Ledger;

/**
 * The JPA workload on JDBC leases (PostgreSQL): the frozen-store-link scenario with its ledger written through a
 * fenced Hibernate entity ({@code JpaLedgerWrites}) instead of JdbcFence.
 */
class JpaJdbcFaultScenariosTest extends JdbcScenarios {

    @Test
    void frozenStoreLinkWithJpaWrites() throws Exception {
        JdbcFaultScenariosTest.frozenLink("jpa-jdbc-frozen-store-link", "jdbc (PostgreSQL), JPA ledger",
                "jpa-jdbc-frozen-link", lease -> Ledger.jpa(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }
}
