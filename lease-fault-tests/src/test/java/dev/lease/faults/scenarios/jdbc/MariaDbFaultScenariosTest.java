package dev.lease.faults.scenarios.jdbc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.lease.testing.MariaDbServer;

/**
 * Fault scenarios on the JDBC backend over MariaDB besides the nemesis ({@link JdbcNemesisTest#mariadb()}): the lease
 * table in a MariaDB of the scenario's own, the fenced ledger in the PostgreSQL of {@link JdbcScenarios}.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbFaultScenariosTest extends JdbcScenarios {

    /**
     * {@link JdbcHolderFaultScenariosTest#sharedTokensWithIdleRowsDeleted()} on MariaDB, whose shared counter row and
     * idle-row deletion take other statements (and other locks: InnoDB locks the rows a statement scans) than
     * PostgreSQL's; its expiry is compared with {@code UTC_TIMESTAMP(6)}, as the backend writes it.
     */
    @Test
    void sharedTokensWithIdleRowsDeleted() throws Exception {
        try (MariaDbServer store = MariaDbServer.start("leases")) {
            JdbcHolderFaultScenariosTest.sharedTokensWithIdleRowsDeleted("jdbc-mariadb-shared-tokens-idle-rows-deleted",
                    "jdbc (MariaDB), shared tokens", store.dataSource(), store.dataSource(),
                    store.jdbcUrl(store.port()), "UTC_TIMESTAMP(6)");
        }
    }
}
