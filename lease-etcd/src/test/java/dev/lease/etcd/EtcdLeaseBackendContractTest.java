package dev.lease.etcd;

import static dev.lease.etcd.EtcdTesting.bytes;

import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.EtcdServer;

/**
 * The contract suite on a real one-member etcd (Debian's binary), with two backends on two clients playing two
 * application instances; a third client takes leases away by deleting their keys. Expiry is the etcd lease's own.
 */
class EtcdLeaseBackendContractTest extends LeaseBackendContractTest<EtcdGrant> {

    private static final String PREFIX = "/contract-leases/";

    private static EtcdServer etcd;
    private static Client firstClient;
    private static Client secondClient;
    private static Client adminClient;
    private static EtcdLeaseBackend first;
    private static EtcdLeaseBackend second;

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdServer.start(1);
        firstClient = EtcdTesting.client(etcd.endpoints());
        secondClient = EtcdTesting.client(etcd.endpoints());
        adminClient = EtcdTesting.client(etcd.endpoints());
        first = new EtcdLeaseBackend(firstClient, PREFIX);
        second = new EtcdLeaseBackend(secondClient, PREFIX);
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd == null) {
            return;
        }
        first.close();
        second.close();
        firstClient.close();
        secondClient.close();
        adminClient.close();
        etcd.close();
    }

    @Override
    protected LeaseBackend<EtcdGrant> backend() {
        return first;
    }

    @Override
    protected LeaseBackend<EtcdGrant> secondBackend() {
        return second;
    }

    @Override
    protected void breakLease(String name) throws Exception {
        adminClient.getKVClient().delete(bytes(first.keyOf(name))).get(10, TimeUnit.SECONDS);
    }
}
