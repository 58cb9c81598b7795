package dev.lease.autoconfigure.leader;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

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

import dev.lease.kubernetes.KubernetesLeaseBackend;
import dev.lease.kubernetes.KubernetesTesting;
import dev.lease.testing.TcpProxy;

/**
 * {@code @LeaderOnly} and {@code LeaderElections} on the Kubernetes backend, on fabric8's mock API server in CRUD mode
 * answering 1.35. Each instance's backend polls instead of watching (see {@link KubernetesTesting}); the
 * auto-configuration backs off for it and reuses its {@code KubernetesClient}.
 */
class KubernetesLeaderElectionEndToEndTest extends LeaderElectionEndToEndTest {

    private static KubernetesMockServer server;

    @BeforeAll
    static void startServer() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        server.init();
        server.setVersionInfo(new VersionInfo.Builder().withMajor("1").withMinor("35").withGitVersion("v1.35.0").build());
    }

    @AfterAll
    static void stopServer() {
        server.destroy();
    }

    @Override
    protected List<String> properties(TcpProxy link, Duration ttl) {
        return List.of("lease.backend=kubernetes", "lease.default-ttl=" + ttl.toMillis() + "ms");
    }

    @Override
    protected void register(AnnotationConfigApplicationContext context, TcpProxy link) {
        // A frozen link must not hold a store call forever: the lease is lost by its local deadline anyway.
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://" + link.address() + "/")
                .withNamespace("elections").withRequestTimeout((int) seconds(5).toMillis())
                .withConnectionTimeout((int) seconds(5).toMillis()).withRequestRetryBackoffLimit(0).build();
        KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
        context.registerBean(KubernetesClient.class, () -> client);
        context.registerBean(KubernetesLeaseBackend.class,
                () -> KubernetesTesting.pollingBackend(client, "elections", "instance-" + UUID.randomUUID()));
    }

    @Override
    protected int storePort() {
        return server.getPort();
    }

    @Override
    protected Duration shortTtl() {
        return seconds(3);
    }
}
