package dev.lease.faults.scenarios.zookeeper;

import org.junit.jupiter.api.Test;

import dev.lease.faults.workload.Ledger;

/**
 * The JPA workload on ZooKeeper leases: the network-freeze scenario with its ledger written through a fenced
 * Hibernate entity ({@code JpaLedgerWrites}) instead of JdbcFence. The stale write the scenario forces must be refused
 * by the entity's {@code @FenceColumn}, and the history checker must see no stale write accepted: when the write
 * updates the entity's row, and when it changes only the entity's element collection.
 */
class JpaZooKeeperFaultScenariosTest extends ZooKeeperScenarios {

    @Test
    void networkFreezeWithJpaWrites() throws Exception {
        ZooKeeperFaultScenariosTest.networkFreeze("jpa-zookeeper-network-freeze", "zookeeper, JPA ledger",
                "jpa-zk-freeze", lease -> Ledger.jpa(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }

    @Test
    void networkFreezeWithJpaCollectionWrites() throws Exception {
        ZooKeeperFaultScenariosTest.networkFreeze("jpa-zookeeper-network-freeze-collection",
                "zookeeper, JPA ledger (element collection)", "jpa-zk-freeze-collection",
                lease -> Ledger.jpaCollection(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }
}
