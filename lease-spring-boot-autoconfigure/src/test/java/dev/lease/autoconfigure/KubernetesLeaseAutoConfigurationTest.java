package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.VersionInfo;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.kubernetes.KubernetesLeaseBackend;

/** {@code lease.backend: kubernetes} on fabric8's mock API server in CRUD mode. */
class KubernetesLeaseAutoConfigurationTest {

    private static KubernetesMockServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KubernetesLeaseConfiguration.class,
                    InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class));

    @BeforeAll
    static void startServer() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        server.init();
    }

    @AfterAll
    static void stopServer() {
        server.destroy();
    }

    @AfterEach
    void currentVersion() {
        version("35");
    }

    @Test
    void aKubernetesClientBeanIsReusedAndLeftOpenAndItsNamespaceUsed() {
        version("35");
        KubernetesClient client = client();
        // Registered without a destroy method, as an application whose client outlives the context would.
        runner.withBean(KubernetesClient.class, () -> client, definition -> definition.setDestroyMethodName(""))
                .run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(KubernetesLeaseBackend.class);
            KubernetesLeaseBackend backend = context.getBean(KubernetesLeaseBackend.class);
            assertThat(backend.namespace()).isEqualTo("auto");
            assertThat(backend.holderIdentity()).as("host name plus a random suffix").matches(".+-[0-9a-f]{8}");
            LeaseTemplate template = context.getBean(LeaseTemplate.class);
            LeaseSpec spec = LeaseSpec.of("auto-k8s", LeaseKind.CORRECTNESS).withTtl(seconds(5));
            long token = template.execute(spec, lease -> lease.token().value());
            long next = template.execute(spec, lease -> lease.token().value());
            assertThat(next).isGreaterThan(token);
            Lease stored = client.leases().inNamespace("auto").withName("lease-auto-k8s").get();
            assertThat(stored).as("default name prefix 'lease-'").isNotNull();
        });
        assertThat(client.leases().inNamespace("auto").withName("lease-auto-k8s").get())
                .as("the application's client is still open").isNotNull();
        client.close();
    }

    @Test
    void namedItBuildsItsOwnClientWithTheCustomizersAndTheProperties() {
        runner.withBean(KubernetesClientBuilderCustomizer.class, () -> builder -> builder.withConfig(config()))
                .withPropertyValues("lease.backend=kubernetes", "lease.kubernetes.namespace=elsewhere",
                        "lease.kubernetes.name-prefix=app-", "lease.kubernetes.holder-identity=pod-1")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(KubernetesLeaseBackend.class)
                            .hasSingleBean(KubernetesClient.class);
                    KubernetesLeaseBackend backend = context.getBean(KubernetesLeaseBackend.class);
                    assertThat(backend.namespace()).isEqualTo("elsewhere");
                    assertThat(backend.holderIdentity()).isEqualTo("pod-1");
                    context.getBean(LeaseTemplate.class).execute(LeaseSpec.of("named", LeaseKind.EFFICIENCY),
                            lease -> {
                                Lease stored = context.getBean(KubernetesClient.class).leases()
                                        .inNamespace("elsewhere").withName("app-named").get();
                                assertThat(stored.getSpec().getHolderIdentity()).isEqualTo("pod-1");
                                return null;
                            });
                });
    }

    @Test
    void theClientOnTheClasspathAloneDoesNotMakeItABackend() {
        runner.withPropertyValues("lease.backend=in-memory").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(KubernetesLeaseBackend.class));
        KubernetesClient client = client();
        runner.withBean(KubernetesClient.class, () -> client).withPropertyValues("lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(KubernetesLeaseBackend.class));
        client.close();
    }

    @Test
    void correctnessIsRefusedAtStartupBefore135() {
        version("34");
        runner.withBean(KubernetesClientBuilderCustomizer.class, () -> builder -> builder.withConfig(config()))
                .withPropertyValues("lease.correctness-backend=kubernetes", "lease.efficiency-backend=kubernetes")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("lease.correctness-backend=kubernetes")
                        .hasMessageContaining("1.35").hasMessageContaining("v1.34"));
        runner.withBean(KubernetesClientBuilderCustomizer.class, () -> builder -> builder.withConfig(config()))
                .withPropertyValues("lease.backend=kubernetes")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Boolean hadToken = context.getBean(LeaseTemplate.class).execute(
                            LeaseSpec.of("old", LeaseKind.EFFICIENCY), lease -> lease.hasToken());
                    assertThat(hadToken).as("an EFFICIENCY lease on 1.34 carries no token").isFalse();
                });
    }

    @Test
    void anInvalidNamePrefixFailsTheStartupNamingTheProperty() {
        runner.withBean(KubernetesClientBuilderCustomizer.class, () -> builder -> builder.withConfig(config()))
                .withPropertyValues("lease.backend=kubernetes", "lease.kubernetes.name-prefix=Leases_")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("'Leases_'"));
    }

    private static void version(String minor) {
        server.setVersionInfo(new VersionInfo.Builder().withMajor("1").withMinor(minor)
                .withGitVersion("v1." + minor + ".0").build());
    }

    private static Config config() {
        return new ConfigBuilder(Config.empty()).withMasterUrl(server.url("/")).withNamespace("auto")
                .withRequestRetryBackoffLimit(0).build();
    }

    private static KubernetesClient client() {
        return new KubernetesClientBuilder().withConfig(config()).build();
    }
}
