package dev.lease.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

/** The contract suite on five real redis-server processes behind proxies (a majority of three). */
class RedlockFiveNodesContractTest extends LeaseBackendContractTest<RedlockGrant> {

    private static RedlockNodes nodes;
    private static RedlockLeaseBackend backend;
    private static RedlockLeaseBackend second;

    @BeforeAll
    static void startNodes() throws Exception {
        nodes = new RedlockNodes(5);
        backend = nodes.backend("contract5:");
        second = nodes.backend("contract5:");
    }

    @AfterAll
    static void stopNodes() {
        nodes.close();
    }

    @Override
    protected LeaseBackend<RedlockGrant> backend() {
        return backend;
    }

    @Override
    protected LeaseBackend<RedlockGrant> secondBackend() {
        return second;
    }

    @Override
    protected void breakLease(String name) {
        nodes.deleteEverywhere(backend.key(name));
    }
}
