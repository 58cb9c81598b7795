package dev.lease.redis;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TestTiming;

/**
 * The contract suite (an EFFICIENCY backend's part of it) on three real redis-server processes behind proxies; a
 * subclass runs it on five.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockLeaseBackendContractTest extends LeaseBackendContractTest<RedlockGrant> {

    private static final Duration NODE_TIMEOUT = TestTiming.seconds(1);

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
        // The contract is about leases, not about how long a node is waited for: by default 5 % of the suite's
        // 1.5 s ttl, 75 ms, which a loaded CI machine missed on all five nodes at once (no quorum, an error). The
        // node timeout has tests of its own (QuorumTest, RedlockNodeFaultTest); a lease's validity still bounds it.
        backend = nodes.backend("contract:", NODE_TIMEOUT);
        second = nodes.backend("contract:", NODE_TIMEOUT);
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
