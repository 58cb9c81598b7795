package dev.lease.kubernetes;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;

/**
 * fabric8's mock API server in CRUD mode (it stores objects, answers 409 to an update with a stale resourceVersion and
 * raises resourceVersions monotonically), behind a small fault layer for what a real API server does differently:
 * <ul>
 *   <li>{@code /version} answers the version set with {@link #version(String, String)};</li>
 *   <li>an update of a Lease without {@code metadata.resourceVersion} is refused with 422, as a real server refuses
 *       an unconditional update of a Lease (the mock would accept it);</li>
 *   <li>resourceVersions have gaps ({@link #gap(int)}): other objects in a real cluster are written too;</li>
 *   <li>a competing write can be slipped in just before the next Lease update ({@link #beforeNextLeaseUpdate}),
 *       which makes a 409 race deterministic.</li>
 * </ul>
 */
final class MockApiServer implements AutoCloseable {

    private final KubernetesCrudDispatcher crud = new KubernetesCrudDispatcher();
    private final KubernetesMockServer server;
    private volatile String major = "1";
    private volatile String minor = "35";
    private volatile int gap;
    private final java.util.concurrent.atomic.AtomicInteger watchRequests = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.List<String> requests = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    private final AtomicReference<Consumer<Lease>> beforeNextLeaseUpdate = new AtomicReference<>();
    private final AtomicReference<String> nextLeaseWriteAnswersVersion = new AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicBoolean loseNextLeaseWriteAnswer =
            new java.util.concurrent.atomic.AtomicBoolean();

    MockApiServer() {
        Map<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>> none = new HashMap<>();
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), none,
                new FaultLayer(), false);
        server.init();
    }

    /** What {@code /version} answers from now on. */
    MockApiServer version(String major, String minor) {
        this.major = major;
        this.minor = minor;
        return this;
    }

    /** Skips {@code gap} resourceVersions after every write of a Lease, as other writes in a busy cluster would. */
    MockApiServer gap(int gap) {
        this.gap = gap;
        return this;
    }

    /**
     * Runs {@code competitor} with the stored Lease (before the update) when the next update of a Lease arrives, then
     * lets the update through: a write made with what the competitor wrote in between, so it carries a stale version.
     */
    void beforeNextLeaseUpdate(Consumer<Lease> competitor) {
        beforeNextLeaseUpdate.set(competitor);
    }

    /**
     * Lets the next successful Lease write through, but answers it with {@code resourceVersion} in place of the
     * stored one: a server that repeats a resourceVersion, breaking KEP-5504's promise.
     */
    void answerNextLeaseWriteWithVersion(String resourceVersion) {
        nextLeaseWriteAnswersVersion.set(resourceVersion);
    }

    /**
     * Applies the next Lease write, then answers 409 as a real server answers the client's retry of a write whose
     * answer was lost (the first try landed, so the retry's create finds the object, or its update a stale version).
     */
    void loseNextLeaseWriteAnswer() {
        loseNextLeaseWriteAnswer.set(true);
    }

    /**
     * Writes {@code lease} directly into the store (no fault layer), for a competing write: an update when it carries
     * a resourceVersion, else a create.
     */
    void write(Lease lease) {
        boolean update = lease.getMetadata().getResourceVersion() != null;
        String path = update ? leasePath(lease) : leasePath(lease).replaceAll("/[^/]*$", "");
        MockResponse response = crud.dispatch(new RecordedRequest("HTTP/1.1", update ? HttpMethod.PUT : HttpMethod.POST,
                path, Headers.builder().add("Content-Type", "application/json").build(),
                new Buffer().writeUtf8(Serialization.asJson(lease))));
        if (response.code() >= 300) {
            throw new IllegalStateException("competing write refused: " + response.code());
        }
    }

    private static String leasePath(Lease lease) {
        return "/apis/coordination.k8s.io/v1/namespaces/" + lease.getMetadata().getNamespace() + "/leases/"
                + lease.getMetadata().getName();
    }

    /** How many watches were requested so far. */
    int watchRequests() {
        return watchRequests.get();
    }

    int port() {
        return server.getPort();
    }

    /** A client of this server: no retries, and requests that give up after {@code timeout}. */
    KubernetesClient client(Duration timeout) {
        return client("http://localhost:" + port() + "/", timeout);
    }

    static KubernetesClient client(String url, Duration timeout) {
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl(url)
                .withNamespace("test")
                .withRequestTimeout((int) timeout.toMillis())
                .withConnectionTimeout((int) timeout.toMillis())
                .withRequestRetryBackoffLimit(0)
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    /** Every request received so far, as {@code METHOD path?query}, for what a Role must allow. */
    java.util.List<String> requests() {
        synchronized (requests) {
            return java.util.List.copyOf(requests);
        }
    }

    /**
     * Stops the server. fabric8's mock gives up on its own shutdown ("Unable to close MockWebServer") when a watch
     * connection closed by the client is still draining, which a loaded machine makes likely: the server's port is
     * released either way, and a test must not fail on it.
     */
    @Override
    public void close() {
        try {
            server.destroy();
        }
        catch (IllegalStateException draining) {
            if (!String.valueOf(draining.getMessage()).contains("Unable to close MockWebServer")) {
                throw draining;
            }
        }
    }

    private final class FaultLayer extends Dispatcher {

        @Override
        public MockResponse dispatch(RecordedRequest received) {
            // Reading a body consumes it: the store gets a copy.
            String body = received.getBody() == null ? "" : received.getUtf8Body();
            RecordedRequest request = new RecordedRequest(received.getHttpVersion(), received.method(),
                    received.getPath(), received.getHeaders(), new Buffer().writeUtf8(body));
            String path = request.getPath();
            requests.add(request.getMethod() + " " + path);
            if (path.contains("watch=true")) {
                watchRequests.incrementAndGet();
            }
            if ("GET".equals(request.getMethod()) && path.startsWith("/version")) {
                return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
                        .setBody("{\"major\":\"" + major + "\",\"minor\":\"" + minor + "\",\"gitVersion\":\"v" + major
                                + "." + minor.replace("+", "") + ".0\"}");
            }
            boolean leaseWrite = path.contains("/leases") && ("PUT".equals(request.getMethod())
                    || "POST".equals(request.getMethod()));
            if (leaseWrite && "PUT".equals(request.getMethod())) {
                Lease sent = Serialization.unmarshal(body, Lease.class);
                String version = sent.getMetadata().getResourceVersion();
                if (version == null || version.isEmpty()) {
                    return status(422, "Invalid", "Lease.coordination.k8s.io \"" + sent.getMetadata().getName()
                            + "\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update");
                }
            }
            if (leaseWrite) {
                Consumer<Lease> competitor = beforeNextLeaseUpdate.getAndSet(null);
                if (competitor != null) {
                    Lease sent = Serialization.unmarshal(body, Lease.class);
                    MockResponse stored = crud.dispatch(new RecordedRequest("HTTP/1.1", HttpMethod.GET,
                            leasePath(sent), Headers.builder().build(), new Buffer()));
                    competitor.accept(stored.code() == 200
                            ? Serialization.unmarshal(stored.getBody().readUtf8(), Lease.class) : null);
                }
            }
            MockResponse response = crud.dispatch(request);
            if (leaseWrite && response.code() < 300) {
                for (int i = 0; i < gap; i++) {
                    crud.requestResourceVersion();
                }
                if (loseNextLeaseWriteAnswer.getAndSet(false)) {
                    boolean create = "POST".equals(request.getMethod());
                    return status(409, create ? "AlreadyExists" : "Conflict", create
                            ? "leases.coordination.k8s.io already exists"
                            : "Operation cannot be fulfilled on leases.coordination.k8s.io: the object has been "
                                    + "modified; please apply your changes to the latest version and try again");
                }
                String answered = nextLeaseWriteAnswersVersion.getAndSet(null);
                if (answered != null) {
                    Lease stored = Serialization.unmarshal(response.getBody().readUtf8(), Lease.class);
                    stored.getMetadata().setResourceVersion(answered);
                    return new MockResponse().setResponseCode(response.code())
                            .setHeader("Content-Type", "application/json").setBody(Serialization.asJson(stored));
                }
            }
            return response;
        }

        private MockResponse status(int code, String reason, String message) {
            return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
                    .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
                            + Serialization.asJson(message) + ",\"reason\":\"" + reason + "\",\"code\":" + code + "}");
        }
    }
}
