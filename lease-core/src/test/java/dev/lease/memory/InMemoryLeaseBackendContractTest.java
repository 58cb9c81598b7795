package dev.lease.memory;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

class InMemoryLeaseBackendContractTest extends LeaseBackendContractTest<InMemoryLeaseBackend.MemoryGrant> {

    private final InMemoryLeaseBackend backend = new InMemoryLeaseBackend();

    @Override
    protected LeaseBackend<InMemoryLeaseBackend.MemoryGrant> backend() {
        return backend;
    }

    @Override
    protected void breakLease(String name) {
        backend.revoke(name);
    }
}
