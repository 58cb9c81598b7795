package dev.lease.faults.scenarios.jdbc;

import org.junit.jupiter.api.Test;

import dev.lease.faults.workload.Ledger;

/**
 * The R2DBC workload on JDBC leases (PostgreSQL): the frozen-store-link scenario with its ledger written through
 * {@code R2dbcFence} in reactive transactions ({@code R2dbcLedgerWrites}) instead of JdbcFence. The stale write the
 * scenario forces must be refused by the R2DBC fence, and the history checker must see no stale write accepted.
 */
class R2dbcJdbcFaultScenariosTest extends JdbcScenarios {

    @Test
    void frozenStoreLinkWithR2dbcWrites() throws Exception {
        JdbcFaultScenariosTest.frozenLink("r2dbc-jdbc-frozen-store-link", "jdbc (PostgreSQL), R2DBC ledger",
                "r2dbc-jdbc-frozen-link", lease -> Ledger.r2dbc(postgres.dataSource(), postgres.port(), lease));
    }
}
