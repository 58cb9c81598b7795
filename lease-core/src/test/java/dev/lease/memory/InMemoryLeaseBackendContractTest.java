package dev.lease.memory;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

class InMemoryLeaseBackendContractTest extends LeaseBackendContractTest {

    private final InMemoryLeaseBackend backend = new InMemoryLeaseBackend();

    @Override
    protected LeaseBackend backend() {
        return backend;
    }

    @Override
    protected void breakLease(String name) {
        backend.revoke(name);
    }
}
