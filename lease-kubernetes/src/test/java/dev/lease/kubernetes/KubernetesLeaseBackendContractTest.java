package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.fabric8.kubernetes.client.KubernetesClient;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

/**
 * The contract suite on fabric8's mock API server (CRUD mode, answering {@code /version} as 1.35, resourceVersions with
 * gaps, unconditional Lease updates refused), with two backends on two clients playing two application instances.
 * Expiry is the real thing: the holder stops renewing and the other instance waits out the lease duration it observed.
 * Waiters poll here: the mock server stalls for seconds whenever a watch closes ({@code KubernetesWatchTest} covers
 * waking on a watch).
 */
class KubernetesLeaseBackendContractTest extends LeaseBackendContractTest<KubernetesGrant> {

    private static MockApiServer server;
    private static KubernetesClient firstClient;
    private static KubernetesClient secondClient;
    private static KubernetesClient adminClient;
    private static KubernetesLeaseBackend first;
    private static KubernetesLeaseBackend second;

    @BeforeAll
    static void startServer() {
        server = new MockApiServer().gap(3);
        firstClient = server.client(seconds(10));
        secondClient = server.client(seconds(10));
        adminClient = server.client(seconds(10));
        first = new KubernetesLeaseBackend(firstClient, "test", "lease-", "first-instance", false);
        second = new KubernetesLeaseBackend(secondClient, "test", "lease-", "second-instance", false);
    }

    @AfterAll
    static void stopServer() {
        firstClient.close();
        secondClient.close();
        adminClient.close();
        server.close();
    }

    @Override
    protected LeaseBackend<KubernetesGrant> backend() {
        return first;
    }

    @Override
    protected LeaseBackend<KubernetesGrant> secondBackend() {
        return second;
    }

    /** Lease names here must be Kubernetes object names: lower case. */
    @Override
    protected String uniqueName() {
        return super.uniqueName().toLowerCase(java.util.Locale.ROOT);
    }

    /** Deletes the Lease object, as an operator's {@code kubectl delete lease} would. */
    @Override
    protected void breakLease(String name) {
        adminClient.leases().inNamespace("test").withName("lease-" + name).delete();
    }
}
