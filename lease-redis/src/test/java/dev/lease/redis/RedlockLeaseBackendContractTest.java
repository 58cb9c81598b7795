package dev.lease.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

/**
 * The contract suite (an EFFICIENCY backend's part of it) on three real redis-server processes behind proxies; a
 * subclass runs it on five.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockLeaseBackendContractTest extends LeaseBackendContractTest<RedlockGrant> {

    private RedlockNodes nodes;
    private RedlockLeaseBackend backend;
    private RedlockLeaseBackend second;

    /** How many redis-servers the suite runs on. */
    int nodeCount() {
        return 3;
    }

    @BeforeAll
    void startNodes() throws Exception {
        nodes = new RedlockNodes(nodeCount());
        backend = nodes.backend("contract:");
        second = nodes.backend("contract:");
    }

    @AfterAll
    void stopNodes() {
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
