package dev.lease.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Test support shared with the auto-configuration's end-to-end tests: a backend that waits by polling alone, because
 * fabric8's mock API server stalls its event loop for seconds whenever a watch closes (a real server does not).
 */
public final class KubernetesTesting {

    private KubernetesTesting() {
    }

    /**
     * A backend on {@code client} that polls instead of watching.
     *
     * @param client the client of the mock server
     * @param namespace the namespace of the Lease objects
     * @param holderIdentity the holder identity
     * @return the backend
     */
    public static KubernetesLeaseBackend pollingBackend(KubernetesClient client, String namespace,
            String holderIdentity) {
        return new KubernetesLeaseBackend(client, namespace, "lease-", holderIdentity, false);
    }
}
