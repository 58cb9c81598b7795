package dev.lease.kubernetes;

import java.util.Locale;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

/**
 * The contract suite against a real cluster: {@code ./mvnw -pl lease-kubernetes -am verify -Pkubernetes-it}, with
 * {@code KUBECONFIG} naming the cluster (fabric8 reads it, or the in-cluster service account). Lease objects go to
 * the namespace {@code -Dlease-it.namespace} (default {@code default}), named {@code lease-it-...}. Skipped otherwise,
 * and not run in CI here (no API server can run on these machines). On Kubernetes 1.35 and later the suite runs
 * with fencing tokens; before, as an efficiency-only backend.
 */
@EnabledIfSystemProperty(named = "lease-it.kubernetes", matches = "true")
class RealClusterContractTest extends LeaseBackendContractTest<KubernetesGrant> {

    private static final String NAMESPACE = System.getProperty("lease-it.namespace", "default");

    private static KubernetesClient firstClient;
    private static KubernetesClient secondClient;
    private static KubernetesLeaseBackend first;
    private static KubernetesLeaseBackend second;

    @BeforeAll
    static void connect() {
        firstClient = new KubernetesClientBuilder().build();
        secondClient = new KubernetesClientBuilder().build();
        first = new KubernetesLeaseBackend(firstClient, NAMESPACE, "lease-it-", "it-first");
        second = new KubernetesLeaseBackend(secondClient, NAMESPACE, "lease-it-", "it-second");
    }

    @AfterAll
    static void disconnect() {
        firstClient.close();
        secondClient.close();
    }

    @Override
    protected LeaseBackend<KubernetesGrant> backend() {
        return first;
    }

    @Override
    protected LeaseBackend<KubernetesGrant> secondBackend() {
        return second;
    }

    @Override
    protected String uniqueName() {
        return super.uniqueName().toLowerCase(Locale.ROOT);
    }

    @Override
    protected void breakLease(String name) {
        firstClient.leases().inNamespace(NAMESPACE).withName("lease-it-" + name).delete();
    }
}
