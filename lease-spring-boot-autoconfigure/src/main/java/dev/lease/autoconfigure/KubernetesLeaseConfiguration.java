package dev.lease.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.UUID;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

import dev.lease.LeaseConfigurationException;
import dev.lease.kubernetes.KubernetesLeaseBackend;

/**
 * The Kubernetes backend, available when the fabric8 client is on the classpath and either a {@code lease.*backend}
 * property names {@code kubernetes} or the application has a {@link KubernetesClient} bean (which is then reused and
 * left to its owner). The client on the classpath alone is not enough: many applications carry it for other reasons.
 * Without a bean, a client is built from the in-cluster service account or the kubeconfig and the application's
 * {@link KubernetesClientBuilderCustomizer}s, and closed on shutdown.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(KubernetesClient.class)
@ConditionalOnLeaseBackend(BackendType.KUBERNETES)
@Conditional(KubernetesLeaseConfiguration.NamedOrClient.class)
@EnableConfigurationProperties(KubernetesLeaseProperties.class)
class KubernetesLeaseConfiguration {

    private static final Log log = LogFactory.getLog(KubernetesLeaseConfiguration.class);

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(KubernetesClient.class)
    KubernetesClient leaseKubernetesClient(ObjectProvider<KubernetesClientBuilderCustomizer> customizers) {
        KubernetesClientBuilder builder = new KubernetesClientBuilder();
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    @Bean
    @ConditionalOnMissingBean(KubernetesLeaseBackend.class)
    KubernetesLeaseBackend kubernetesLeaseBackend(KubernetesClient client, KubernetesLeaseProperties k8s) {
        String namespace = namespace(k8s, client);
        String identity = k8s.getHolderIdentity() != null ? k8s.getHolderIdentity() : defaultHolderIdentity();
        KubernetesLeaseBackend backend;
        try {
            backend = new KubernetesLeaseBackend(client, namespace, k8s.getNamePrefix(), identity);
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage(), "fix lease.kubernetes.namespace, "
                    + "lease.kubernetes.name-prefix or lease.kubernetes.holder-identity.");
        }
        catch (KubernetesClientException ex) {
            throw new LeaseConfigurationException("Could not read /version from the Kubernetes API server at "
                    + client.getMasterUrl() + ": " + ex.getMessage(),
                    "check that the API server is reachable with the in-cluster service account or the kubeconfig "
                            + "(KUBECONFIG), or define a KubernetesClient bean.");
        }
        log.info("Kubernetes leases in namespace " + namespace + " of " + client.getMasterUrl() + " as "
                + identity + (backend.traits().issuesFencingTokens() ? " (fencing tokens)" : " (no fencing tokens before "
                        + "Kubernetes 1.35: EFFICIENCY only)"));
        return backend;
    }

    private static String namespace(KubernetesLeaseProperties k8s, KubernetesClient client) {
        if (k8s.getNamespace() != null && !k8s.getNamespace().isBlank()) {
            return k8s.getNamespace().trim();
        }
        String ofClient = client.getNamespace();
        return ofClient != null && !ofClient.isBlank() ? ofClient : "default";
    }

    /** The host name (a pod's name in a cluster) and a random suffix: two instances on one host stay apart. */
    static String defaultHolderIdentity() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException ex) {
            host = System.getenv().getOrDefault("HOSTNAME", "unknown-host");
        }
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A {@code lease.*backend} property naming kubernetes, or a client to reuse. */
    static final class NamedOrClient extends AnyNestedCondition {

        NamedOrClient() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @Conditional(Named.class)
        static final class ByName {
        }

        @ConditionalOnBean(type = "io.fabric8.kubernetes.client.KubernetesClient")
        static final class Client {
        }
    }

    /** A {@code lease.*backend} property names kubernetes. */
    static final class Named extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return BackendType.KUBERNETES.namedIn(BackendType.named(context.getEnvironment()))
                    .map(ConditionOutcome::match)
                    .orElseGet(() -> ConditionOutcome.noMatch("no lease.*backend property names kubernetes"));
        }
    }
}
