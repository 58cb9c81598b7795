package dev.lease.autoconfigure;

import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Customizes the fabric8 client the Kubernetes lease backend builds when the application has no
 * {@code KubernetesClient} bean (it does not touch an application's own client). The builder starts from the usual
 * automatic configuration (in-cluster service account, else the kubeconfig); customizers run in {@code @Order} and
 * may replace it, for instance with a {@code Config} of their own or another HTTP client factory.
 *
 * <pre>{@code
 * @Bean
 * KubernetesClientBuilderCustomizer leaseClientTimeouts() {
 *     return builder -> builder.editOrNewConfig().withRequestTimeout(5000).endConfig();
 * }
 * }</pre>
 */
@FunctionalInterface
public interface KubernetesClientBuilderCustomizer {

    /**
     * Customizes the builder before the client is built.
     *
     * @param builder the builder
     */
    void customize(KubernetesClientBuilder builder);
}
