package dev.lease.faults.scenarios.zookeeper;

import org.junit.jupiter.api.Test;

import dev.lease.faults.workload.Ledger;

/**
 * The HTTP workload on ZooKeeper leases: the network-freeze scenario with its ledger written through fenced calls to a
 * ledger service ({@code HttpLedgerWrites}: {@code Fencing-Token} header, {@code @FencedRequest}, the service's
 * {@code JdbcFence}) instead of JdbcFence in the holder's JVM. The stale call the scenario forces must be answered
 * 409, and the history checker must see no stale write accepted.
 */
class HttpZooKeeperFaultScenariosTest extends ZooKeeperScenarios {

    @Test
    void networkFreezeWithFencedCalls() throws Exception {
        ZooKeeperFaultScenariosTest.networkFreeze("http-zookeeper-network-freeze", "zookeeper, HTTP ledger",
                "http-zk-freeze", lease -> Ledger.http(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }
}
