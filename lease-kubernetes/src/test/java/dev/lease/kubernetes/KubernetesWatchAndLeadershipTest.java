package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.Election;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Waiting on a watch, and leader election (what most users take this backend for).
 */
class KubernetesWatchAndLeadershipTest {

    private static MockApiServer server;
    private static KubernetesClient firstClient;
    private static KubernetesClient secondClient;
    private static KubernetesLeaseBackend first;
    private static KubernetesLeaseBackend second;

    @BeforeAll
    static void start() {
        server = new MockApiServer().gap(2);
        firstClient = server.client(seconds(10));
        secondClient = server.client(seconds(10));
        first = new KubernetesLeaseBackend(firstClient, "test", "lease-", "first", true);
        second = new KubernetesLeaseBackend(secondClient, "test", "lease-", "second", true);
    }

    @AfterAll
    static void stop() {
        firstClient.close();
        secondClient.close();
        server.close();
    }

    /** The waiter returns on the release event, long before its maxWait of a minute. */
    @Test
    void aWaiterIsWokenByTheReleaseThroughAWatch() throws Exception {
        String name = "watched";
        KubernetesGrant held = first.tryAcquire(new GrantRequest(name, seconds(30), r -> { }))
                .orElseThrow();
        assertThat(second.tryAcquire(new GrantRequest(name, seconds(30), r -> { }))).isEmpty();
        int watchesBefore = server.watchRequests();
        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
            try {
                second.awaitRelease(name, Duration.ofMinutes(1));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        await().atMost(seconds(10)).until(() -> server.watchRequests() > watchesBefore);
        first.release(held);
        await().atMost(seconds(20)).until(waiter::isDone);
        assertThat(second.tryAcquire(new GrantRequest(name, seconds(30), r -> { }))).isPresent();
    }

    /**
     * Two instances campaign for one election: one leads, with a token; when it steps down (shutdown releases the
     * term) the other leads with a higher token, and no two terms ever overlap.
     */
    @Test
    void oneLeaderAtATimeAndEachTermHasAHigherToken() throws Exception {
        AtomicInteger leading = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        List<FencingToken> tokens = new CopyOnWriteArrayList<>();
        Election.Listener listener = new Election.Listener() {
            @Override
            public void granted(LeadershipGrantedEvent event) {
                mostAtOnce.accumulateAndGet(leading.incrementAndGet(), Math::max);
                tokens.add(event.token().orElseThrow());
            }

            @Override
            public void revoked(LeadershipRevokedEvent event) {
                leading.decrementAndGet();
            }
        };
        LeaseSpec spec = LeaseSpec.of("reports", LeaseKind.CORRECTNESS).withTtl(seconds(3));
        // A server of its own, and backends that poll: the mock server stalls for seconds after a watch closes (a
        // real one does not), which the watch test just did, and which would otherwise eat this test's waits.
        try (MockApiServer own = new MockApiServer().gap(2);
                KubernetesClient oneClient = own.client(seconds(10));
                KubernetesClient twoClient = own.client(seconds(10));
                LeaseEngine one = engineOn(KubernetesTesting.pollingBackend(oneClient, "test", "one"));
                LeaseEngine two = engineOn(KubernetesTesting.pollingBackend(twoClient, "test", "two"))) {
            Election a = one.election(spec, listener);
            Election b = two.election(spec, listener);
            a.start();
            b.start();
            await().atMost(seconds(20)).until(() -> a.isLeader() || b.isLeader());
            Election leader = a.isLeader() ? a : b;
            Election follower = leader == a ? b : a;
            assertThat(follower.isLeader()).isFalse();
            long firstTerm = leader.token().orElseThrow().value();
            leader.close();
            await().atMost(seconds(20)).until(follower::isLeader);
            assertThat(follower.token().orElseThrow().value()).as("next term's token").isGreaterThan(firstTerm);
            follower.close();
        }
        assertThat(mostAtOnce).as("leaders at once").hasValue(1);
        assertThat(tokens).hasSize(2);
    }

    private static LeaseEngine engineOn(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
