/**
 * The Kubernetes lease backend: {@code coordination.k8s.io/v1} Lease objects on the API server every cluster already
 * runs, through the fabric8 kubernetes-client. Fenced on Kubernetes 1.35 and later, where the acquiring write's
 * {@code resourceVersion} is a comparable integer; efficiency-only on older servers. See
 * {@link dev.lease.kubernetes.KubernetesLeaseBackend}.
 */
package dev.lease.kubernetes;
