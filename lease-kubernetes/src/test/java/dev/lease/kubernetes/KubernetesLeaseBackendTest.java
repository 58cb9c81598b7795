package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * What the contract suite cannot show on its own, on the mock API server behind its fault layer: names, the
 * {@code /version} rule, tokens against resourceVersions with gaps and across re-creation, 409 races made
 * deterministic, and expiry judged on the competitor's own clock whatever the holder's wall clock wrote.
 */
class KubernetesLeaseBackendTest {

    private static MockApiServer server;
    private static KubernetesClient client;
    private static KubernetesClient otherClient;
    private static KubernetesLeaseBackend first;
    private static KubernetesLeaseBackend second;

    private String name;

    @BeforeAll
    static void start() {
        server = new MockApiServer().gap(4);
        client = server.client(seconds(10));
        otherClient = server.client(seconds(10));
        first = new KubernetesLeaseBackend(client, "test", "lease-", "first", false);
        second = new KubernetesLeaseBackend(otherClient, "test", "lease-", "second", false);
    }

    @AfterAll
    static void stop() {
        client.close();
        otherClient.close();
        server.close();
    }

    @AfterEach
    void currentVersion() {
        server.version("1", "35").gap(4);
    }

    @org.junit.jupiter.api.BeforeEach
    void name(TestInfo info) {
        name = info.getTestMethod().orElseThrow().getName().toLowerCase() + "-" + System.nanoTime();
    }

    @Test
    void namesThatAreNotKubernetesObjectNamesAreRefusedNotMapped() {
        assertThatThrownBy(() -> first.validateName("Invoice-42")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'Invoice-42'").hasMessageContaining("'lease-Invoice-42'")
                .hasMessageContaining("upper-case");
        assertThatThrownBy(() -> first.validateName("invoice_42")).hasMessageContaining("'lease-invoice_42'");
        assertThatThrownBy(() -> first.validateName("invoice-")).hasMessageContaining("end with a letter or digit");
        assertThatThrownBy(() -> first.validateName("a".repeat(250))).hasMessageContaining("at most 253");
        assertThatThrownBy(() -> first.tryAcquire(new GrantRequest("Invoice-42", seconds(5), reason -> { })))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(client.leases().inNamespace("test").withName("lease-invoice-42").get()).isNull();
        assertThatThrownBy(() -> new KubernetesLeaseBackend(client, "test", "Lease_", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'Lease_'");
        first.validateName("invoice-42");
        first.validateName("reports.daily");
    }

    @Test
    void beforeKubernetes135CorrectnessIsRefusedAtStartupAndEfficiencyStillWorks() throws Exception {
        server.version("1", "34");
        KubernetesLeaseBackend old = new KubernetesLeaseBackend(client, "test", "lease-", "old", false);
        assertThat(old.traits().issuesFencingTokens()).isFalse();
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, old);
        routes.put(LeaseKind.EFFICIENCY, old);
        assertThatThrownBy(() -> BackendRouter.of(routes).backendFor(LeaseKind.CORRECTNESS))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("Kubernetes v1.35 or later").hasMessageContaining("v1.34");
        try (LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, old)),
                LeaseDefaults.standard())) {
            boolean hadToken = engine.execute(LeaseSpec.of(name, LeaseKind.EFFICIENCY), lease -> lease.hasToken());
            assertThat(hadToken).as("an EFFICIENCY lease on 1.34 carries no token").isFalse();
        }
        for (String[] version : new String[][] {{"1", "35"}, {"1", "35+"}, {"1", "36"}, {"2", "0"}}) {
            server.version(version[0], version[1]);
            assertThat(new KubernetesLeaseBackend(client, "test", "lease-", "new", false).traits().issuesFencingTokens())
                    .as("fenced on %s.%s", version[0], version[1]).isTrue();
        }
        server.version("1", "9");
        assertThat(new KubernetesLeaseBackend(client, "test", "lease-", "new", false).traits().issuesFencingTokens())
                .as("1.9 is older than 1.35 (versions compare as numbers)").isFalse();
    }

    @Test
    void tokensAreTheAcquiringWritesResourceVersionAndRiseAcrossDeleteAndRecreate() throws Exception {
        KubernetesGrant one = grant(first, seconds(5)).orElseThrow();
        assertThat(one.token().getAsLong()).as("token = resourceVersion of the acquiring write")
                .isEqualTo(Long.parseLong(one.resourceVersion()));
        first.release(one);
        client.leases().inNamespace("test").withName("lease-" + name).delete();
        await().atMost(seconds(10)).until(() -> client.leases().inNamespace("test").withName("lease-" + name).get() == null);
        KubernetesGrant two = grant(second, seconds(5)).orElseThrow();
        Lease stored = client.leases().inNamespace("test").withName("lease-" + name).get();
        assertThat(two.token().getAsLong()).as("token after re-creation").isGreaterThan(one.token().getAsLong())
                .isEqualTo(Long.parseLong(stored.getMetadata().getResourceVersion()));
        assertThat(two.token().getAsLong() - one.token().getAsLong()).as("resourceVersions have gaps").isGreaterThan(1);
        second.release(two);
    }

    /**
     * A server that breaks KEP-5504's promise and answers a grant with the resourceVersion of an earlier grant: the
     * equal token is refused (two holders must never pass the same fence), and the request's object is freed.
     */
    @Test
    void aGrantWhoseResourceVersionRepeatsAnEarlierTokenIsRefused() throws Exception {
        KubernetesGrant one = grant(first, seconds(5)).orElseThrow();
        first.release(one);
        server.answerNextLeaseWriteWithVersion(String.valueOf(one.token().getAsLong()));
        GrantRequest repeated = new GrantRequest(name, seconds(5), reason -> { });
        assertThatThrownBy(() -> first.tryAcquire(repeated)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'" + name + "'")
                .hasMessageContaining("is not greater than the token " + one.token().getAsLong());
        first.abandon(repeated);
        assertThat(stored().getSpec().getHolderIdentity()).as("the refused grant's object freed").isNull();
        KubernetesGrant three = grant(first, seconds(5)).orElseThrow();
        assertThat(three.token().getAsLong()).isGreaterThan(one.token().getAsLong());
        first.release(three);
    }

    /**
     * Per-entity names ({@code invoice-42}) must not make the backend's memory grow without limit: names acquired and
     * released, or waited for and then granted, leave nothing behind, and busy names given up on are kept at most up
     * to the limit (forgetting one only makes a later takeover wait longer).
     */
    @Test
    void manyDistinctNamesLeaveNoPerNameStateBehind() throws Exception {
        KubernetesLeaseBackend bounded = new KubernetesLeaseBackend(client, "test", "lease-", "bounded", false, 5);
        long lastToken = 0;
        for (int i = 0; i < 30; i++) {
            KubernetesGrant grant = bounded.tryAcquire(
                    new GrantRequest(name + "-" + i, seconds(5), reason -> { })).orElseThrow();
            assertThat(grant.token().getAsLong()).isGreaterThan(lastToken);
            lastToken = grant.token().getAsLong();
            bounded.release(grant);
        }
        assertThat(bounded.observations()).as("acquired and released").isZero();
        java.util.List<KubernetesGrant> held = new java.util.ArrayList<>();
        for (int i = 0; i < 12; i++) {
            held.add(second.tryAcquire(new GrantRequest(name + "-busy-" + i, seconds(30), reason -> { }))
                    .orElseThrow());
            assertThat(bounded.tryAcquire(new GrantRequest(name + "-busy-" + i, seconds(5), reason -> { })))
                    .isEmpty();
        }
        assertThat(bounded.observations()).as("busy names given up on, at most the limit").isEqualTo(5);
        for (KubernetesGrant grant : held) {
            second.release(grant);
        }
        for (int i = 7; i < 12; i++) {
            bounded.release(bounded.tryAcquire(new GrantRequest(name + "-busy-" + i, seconds(5), reason -> { }))
                    .orElseThrow());
        }
        assertThat(bounded.observations()).as("waited for, then granted").isZero();
    }

    /**
     * The create (or the update) of this very request landed but its answer was lost, and the client's retry got 409:
     * not "busy" (that would block our own name for the lease duration) but a failure the engine abandons, which frees
     * the object this request wrote.
     */
    @Test
    void a409OnARetryOfOurOwnLandedWriteIsAFailureThatIsAbandonedNotBusy() throws Exception {
        for (boolean create : new boolean[] {true, false}) {
            String lease = name + (create ? "-create" : "-update");
            if (!create) {
                second.release(second.tryAcquire(new GrantRequest(lease, seconds(5), reason -> { })).orElseThrow());
            }
            server.loseNextLeaseWriteAnswer();
            GrantRequest request = new GrantRequest(lease, seconds(30), reason -> { });
            assertThatThrownBy(() -> first.tryAcquire(request)).as(create ? "create" : "update")
                    .hasMessageContaining("'" + lease + "'").hasMessageContaining("answer was lost");
            Lease written = client.leases().inNamespace("test").withName("lease-" + lease).get();
            assertThat(written.getSpec().getHolderIdentity()).as("the lost write landed").isEqualTo("first");
            first.abandon(request);
            assertThat(client.leases().inNamespace("test").withName("lease-" + lease).get().getSpec()
                    .getHolderIdentity()).as("freed by the abandon").isNull();
            first.release(first.tryAcquire(new GrantRequest(lease, seconds(5), reason -> { })).orElseThrow());
        }
    }

    /** Through the engine: a lost answer costs one retry, not the 5 min lease duration the write asked for. */
    @Test
    void theEngineRetriesAfterItsOwnLostWriteAnswerAndGetsTheLease() {
        server.loseNextLeaseWriteAnswer();
        try (LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, first)),
                LeaseDefaults.standard())) {
            boolean granted = engine.execute(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(Duration.ofMinutes(5))
                    .withWaitFor(seconds(20)), lease -> lease.hasToken());
            assertThat(granted).isTrue();
        }
        assertThat(stored().getSpec().getHolderIdentity()).isNull();
    }

    @Test
    void everyWriteIsConditionalOnTheResourceVersionAndEveryRenewalChangesTheObject() throws Exception {
        Lease unconditional = new LeaseBuilder().withNewMetadata().withName("lease-" + name).withNamespace("test")
                .endMetadata().withNewSpec().withHolderIdentity("x").endSpec().build();
        client.leases().inNamespace("test").resource(unconditional).create();
        Lease created = client.leases().inNamespace("test").withName("lease-" + name).get();
        created.getMetadata().setResourceVersion(null);
        // fabric8's update() fills in a missing resourceVersion itself: a raw PUT shows what the server does.
        HttpResponse<String> refused = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://localhost:" + server.port() + "/apis/coordination.k8s.io/v1/namespaces/test/leases/lease-" + name))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(Serialization.asJson(created))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).as("an update without resourceVersion, as a real server answers it")
                .isEqualTo(422);
        Lease freed = client.leases().inNamespace("test").withName("lease-" + name).edit(l -> {
            l.getSpec().setHolderIdentity(null);
            return l;
        });
        assertThat(freed.getSpec().getHolderIdentity()).isNull();
        KubernetesGrant grant = grant(first, seconds(5)).orElseThrow();
        String before = grant.resourceVersion();
        ZonedDateTime renewedBefore = stored().getSpec().getRenewTime();
        assertThat(first.renew(grant)).isTrue();
        assertThat(first.renew(grant)).isTrue();
        assertThat(Long.parseLong(grant.resourceVersion())).as("renewals bump the resourceVersion")
                .isGreaterThan(Long.parseLong(before));
        assertThat(stored().getSpec().getRenewTime()).isAfter(renewedBefore);
        assertThat(stored().getSpec().getHolderIdentity()).isEqualTo("first");
        first.release(grant);
        assertThat(stored().getSpec().getHolderIdentity()).isNull();
    }

    @Test
    void aWriteBetweenReadAndUpdateWinsAndTheLoserSees409AsBusy() throws Exception {
        first.release(grant(first, seconds(5)).orElseThrow());
        server.beforeNextLeaseUpdate(stored -> server.write(new LeaseBuilder(stored).editSpec()
                .withHolderIdentity("rival").endSpec().build()));
        assertThat(grant(second, seconds(5))).as("update with the version read before the rival's write").isEmpty();
        assertThat(stored().getSpec().getHolderIdentity()).isEqualTo("rival");
    }

    @Test
    void aCreateRaceIsLostAsBusy() throws Exception {
        server.beforeNextLeaseUpdate(absent -> server.write(new LeaseBuilder().withNewMetadata()
                .withName("lease-" + name).withNamespace("test").endMetadata()
                .withNewSpec().withHolderIdentity("rival").withLeaseDurationSeconds(30).endSpec().build()));
        assertThat(grant(first, seconds(5))).as("create after the rival's").isEmpty();
        assertThat(stored().getSpec().getHolderIdentity()).isEqualTo("rival");
    }

    @Test
    void aRenewalRacingAnotherWriteIsALoss() throws Exception {
        KubernetesGrant grant = grant(first, seconds(5)).orElseThrow();
        server.beforeNextLeaseUpdate(stored -> server.write(new LeaseBuilder(stored).editSpec()
                .withHolderIdentity("rival").endSpec().build()));
        assertThat(first.renew(grant)).isFalse();
        first.release(grant);
        assertThat(stored().getSpec().getHolderIdentity()).as("the stale release left the rival's write").isEqualTo("rival");
    }

    /**
     * The holder's wall clock is far behind (its renewTime an hour old) or far ahead: a competitor waits the lease
     * duration from its own first read either way, never judging renewTime against its own wall clock.
     */
    @Test
    void expiryIsJudgedOnTheCompetitorsOwnClockWhateverRenewTimeSays() throws Exception {
        for (long skewHours : new long[] {-1, 1}) {
            String lease = name + (skewHours < 0 ? "-behind" : "-ahead");
            KubernetesGrant held = first.tryAcquire(
                    new GrantRequest(lease, Duration.ofSeconds(1), reason -> { })).orElseThrow();
            ZonedDateTime skewed = ZonedDateTime.now(ZoneOffset.UTC).plusHours(skewHours);
            Lease stored = client.leases().inNamespace("test").withName("lease-" + lease).get();
            server.write(new LeaseBuilder(stored).editSpec().withRenewTime(skewed).withAcquireTime(skewed).endSpec()
                    .build());
            long start = System.nanoTime();
            AtomicReference<KubernetesGrant> taken = new AtomicReference<>();
            await().atMost(seconds(15)).pollInterval(Duration.ofMillis(20)).until(() -> {
                second.tryAcquire(new GrantRequest(lease, seconds(5), reason -> { })).ifPresent(taken::set);
                return taken.get() != null;
            });
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("taken over only after the lease duration "
                    + "(1 s) and the margin (1 s), holder's clock %+d h", skewHours)
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(2));
            assertThat(taken.get().token().getAsLong()).isGreaterThan(held.token().getAsLong());
            first.release(held);
            assertThat(second.renew(taken.get())).as("the stale release left the successor's lease").isTrue();
            second.release(taken.get());
        }
    }

    @Test
    void competitorsWaitATenthOfTheLeaseDurationMoreAndAtLeastASecond() {
        assertThat(Observations.takeoverMarginNanos(Duration.ofSeconds(2).toNanos()))
                .isEqualTo(Duration.ofSeconds(1).toNanos());
        assertThat(Observations.takeoverMarginNanos(Duration.ofSeconds(30).toNanos()))
                .isEqualTo(Duration.ofSeconds(3).toNanos());
    }

    @Test
    void theLeaseDurationIsTheTtlRoundedUpToWholeSeconds() {
        assertThat(LeaseObjects.durationSeconds(Duration.ofMillis(1500))).isEqualTo(2);
        assertThat(LeaseObjects.durationSeconds(Duration.ofSeconds(2))).isEqualTo(2);
        assertThat(LeaseObjects.durationSeconds(Duration.ofMillis(1))).isEqualTo(1);
    }

    @Test
    void anAbandonedRequestFreesOnlyTheObjectItWrote() throws Exception {
        GrantRequest request = new GrantRequest(name, seconds(5), reason -> { });
        first.tryAcquire(request).orElseThrow();
        second.abandon(request);
        assertThat(stored().getSpec().getHolderIdentity()).as("another instance's abandon").isEqualTo("first");
        first.abandon(new GrantRequest(name, seconds(5), reason -> { }));
        assertThat(stored().getSpec().getHolderIdentity()).as("another request's abandon").isEqualTo("first");
        first.abandon(request);
        assertThat(stored().getSpec().getHolderIdentity()).as("its own request's abandon").isNull();
        assertThat(grant(second, seconds(5))).isPresent();
    }

    private Optional<KubernetesGrant> grant(KubernetesLeaseBackend backend, Duration ttl)
            throws Exception {
        return backend.tryAcquire(new GrantRequest(name, ttl, reason -> { }));
    }

    private Lease stored() {
        return client.leases().inNamespace("test").withName("lease-" + name).get();
    }
}
