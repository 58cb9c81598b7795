package dev.lease.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The Kubernetes backend ({@code lease.kubernetes.*}): one coordination.k8s.io/v1 Lease object per lease name; fenced
 * by resourceVersion on Kubernetes 1.35 and later. The client is the application's KubernetesClient bean, else one
 * built from the in-cluster service account or the kubeconfig. See {@link KubernetesLeaseConfiguration}.
 */
@ConfigurationProperties("lease.kubernetes")
public class KubernetesLeaseProperties {

    /** Namespace of the Lease objects. Unset means the client's namespace (the pod's own in a cluster), else 'default'. */
    private @Nullable String namespace;

    /**
     * Prepended to a lease name to form its Lease object name; the result must be a valid Kubernetes object name
     * (lower-case letters, digits, '-' and '.').
     */
    private String namePrefix = "lease-";

    /**
     * Written as holderIdentity of the Leases this instance holds, for people reading them; unique per instance.
     * Unset means the host name (the pod name in a cluster) plus a random suffix.
     */
    private @Nullable String holderIdentity;

    /** Kubernetes settings with their defaults. */
    public KubernetesLeaseProperties() {
    }

    public @Nullable String getNamespace() {
        return namespace;
    }

    public void setNamespace(@Nullable String namespace) {
        this.namespace = namespace;
    }

    public String getNamePrefix() {
        return namePrefix;
    }

    public void setNamePrefix(String namePrefix) {
        this.namePrefix = namePrefix;
    }

    public @Nullable String getHolderIdentity() {
        return holderIdentity;
    }

    public void setHolderIdentity(@Nullable String holderIdentity) {
        this.holderIdentity = holderIdentity;
    }
}
