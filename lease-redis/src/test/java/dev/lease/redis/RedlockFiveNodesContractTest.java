package dev.lease.redis;

/** The contract suite on five real redis-server processes behind proxies (a majority of three). */
class RedlockFiveNodesContractTest extends RedlockLeaseBackendContractTest {

    @Override
    int nodeCount() {
        return 5;
    }
}
