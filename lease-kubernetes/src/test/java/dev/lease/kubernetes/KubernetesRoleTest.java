package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;

import dev.lease.spi.GrantRequest;

/**
 * The Role docs/security.md gives the lease service account ({@code get, list, watch, create, update} on
 * {@code leases.coordination.k8s.io} in the lease namespace, nothing else) is enough for everything the backend does:
 * every request it sends while granting, renewing, waiting on a busy name, taking over and releasing maps to one of
 * those verbs (plus {@code GET /version}, which every authenticated user may read). No real API server can run here,
 * so RBAC itself is not enforced; what is checked is that the backend asks for nothing more.
 */
class KubernetesRoleTest {

    static final Set<String> ROLE_VERBS = Set.of("get", "list", "watch", "create", "update");

    @Test
    void theBackendNeedsNoVerbBeyondTheDocumentedRole() throws Exception {
        Set<String> used = new TreeSet<>();
        try (MockApiServer server = new MockApiServer();
                KubernetesClient firstClient = server.client(seconds(10));
                KubernetesClient secondClient = server.client(seconds(10))) {
            KubernetesLeaseBackend first = new KubernetesLeaseBackend(firstClient, "leases", "lease-", "first");
            KubernetesLeaseBackend second = new KubernetesLeaseBackend(secondClient, "leases", "lease-", "second");
            first.checkHealth(seconds(5));
            var held = first.tryAcquire(new GrantRequest("report", Duration.ofSeconds(2), reason -> { })).orElseThrow();
            assertThat(first.renew(held)).isTrue();
            assertThat(second.tryAcquire(new GrantRequest("report", Duration.ofSeconds(2), reason -> { }))).isEmpty();
            first.release(held);
            var next = second.tryAcquire(new GrantRequest("report", Duration.ofSeconds(2), reason -> { }))
                    .orElseThrow();
            second.release(next);
            // Last: the mock server answers slowly once a watch has been open.
            first.tryAcquire(new GrantRequest("report", Duration.ofSeconds(2), reason -> { })).orElseThrow();
            second.awaitRelease("report", Duration.ofMillis(200));

            for (String request : server.requests()) {
                String method = request.substring(0, request.indexOf(' '));
                String path = request.substring(request.indexOf(' ') + 1);
                if (method.equals("GET") && path.startsWith("/version")) {
                    continue;
                }
                assertThat(path).as(request).startsWith("/apis/coordination.k8s.io/v1/namespaces/leases/leases");
                used.add(verb(method, path));
            }
        }
        assertThat(ROLE_VERBS).as("verbs the backend used").containsAll(used);
        assertThat(used).as("the test exercised the backend").contains("get", "create", "update");
    }

    private static String verb(String method, String path) {
        String resource = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        boolean collection = resource.endsWith("/leases");
        return switch (method) {
            case "GET" -> path.contains("watch=true") ? "watch" : collection ? "list" : "get";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> collection ? "deletecollection" : "delete";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
    }
}
