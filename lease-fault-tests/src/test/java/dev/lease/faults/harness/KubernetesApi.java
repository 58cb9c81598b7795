package dev.lease.faults.harness;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Objects;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import org.awaitility.Awaitility;

import dev.lease.kubernetes.KubernetesLeaseBackend;
import dev.lease.kubernetes.KubernetesTesting;
import dev.lease.testing.TestTiming;

/**
 * fabric8's mock API server in CRUD mode, the one lease store of the suite that is not the real thing (no API server
 * runs on these machines): it stores Lease objects, answers 409 to an update with a stale resourceVersion and raises
 * resourceVersions monotonically. {@code /version} answers 1.35, where resourceVersions are comparable (KEP-5504), so
 * the backend issues fencing tokens. Its store is the dispatcher's, kept across {@link #down()} and {@link #up()}:
 * a restart of the API server (etcd keeps the objects and the revision counter, so do we) on the same port.
 */
public final class KubernetesApi implements AutoCloseable {

    /** The namespace of the scenarios' Lease objects. */
    public static final String NAMESPACE = "faults";

    /**
     * fabric8's mock logs every request at INFO: megabytes a run, tens of them in a soak. Held here, as
     * {@link java.util.logging.LogManager} keeps loggers only weakly.
     */
    private static final Logger MOCK_LOG = Logger.getLogger("io.fabric8.mockwebserver");

    static {
        MOCK_LOG.setLevel(Level.WARNING);
    }

    private final Dispatcher store = new VersionedCrud();
    private final int port;
    private KubernetesMockServer server;

    private KubernetesApi() {
        server = server();
        server.init(InetAddress.getLoopbackAddress(), 0);
        port = server.getPort();
    }

    public static KubernetesApi start() {
        return new KubernetesApi();
    }

    public int port() {
        return port;
    }

    /** Stops the server: connections are refused until {@link #up()}; the stored objects stay. */
    public synchronized void down() {
        if (server == null) {
            return;
        }
        try {
            server.destroy();
        }
        catch (IllegalStateException draining) {
            // fabric8's mock gives up on its own shutdown while a closed connection still drains; the port is
            // released either way.
            if (!String.valueOf(draining.getMessage()).contains("Unable to close MockWebServer")) {
                throw draining;
            }
        }
        server = null;
    }

    /** Starts the server again, on its port, with the objects it had. */
    public synchronized void up() {
        if (server == null) {
            KubernetesMockServer restarted = server();
            restarted.init(InetAddress.getLoopbackAddress(), port);
            server = restarted;
        }
    }

    private KubernetesMockServer server() {
        return new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), new HashMap<>(),
                store, false);
    }

    /**
     * A client of the server at {@code url} (a proxy's): no retries, and requests and connections that give up after
     * {@code timeout}, so that a frozen link fails calls instead of hanging them.
     */
    public static KubernetesClient client(String url, Duration timeout) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace(NAMESPACE)
                .withRequestTimeout((int) timeout.toMillis()).withConnectionTimeout((int) timeout.toMillis())
                .withRequestRetryBackoffLimit(0).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    /**
     * A backend on {@code client} that polls instead of watching (the mock stalls for seconds whenever a watch
     * closes), holding as {@code identity}. Its constructor reads {@code /version}: the client's first request, which
     * loads most of fabric8 and Vert.x and, on a loaded machine, outlasts the short request timeout of a nemesis
     * client; it is asked again until it answers.
     */
    public static KubernetesLeaseBackend backend(KubernetesClient client, String identity) {
        return Awaitility.await("the first answer of the mock API server to " + identity)
                .atMost(TestTiming.seconds(60)).pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(KubernetesClientException.class)
                .until(() -> KubernetesTesting.pollingBackend(client, NAMESPACE, identity), Objects::nonNull);
    }

    /** The URL of {@code port} on this machine, as a client's master URL. */
    public static String url(int port) {
        return "http://127.0.0.1:" + port + "/";
    }

    @Override
    public void close() {
        down();
    }

    /** The CRUD store, and {@code /version} as a 1.35 API server answers it. */
    private static final class VersionedCrud extends Dispatcher {

        private final KubernetesCrudDispatcher crud = new KubernetesCrudDispatcher();

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            if ("GET".equals(request.getMethod()) && request.getPath().startsWith("/version")) {
                return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
                        .setBody("{\"major\":\"1\",\"minor\":\"35\",\"gitVersion\":\"v1.35.0\"}");
            }
            return crud.dispatch(request);
        }
    }
}
