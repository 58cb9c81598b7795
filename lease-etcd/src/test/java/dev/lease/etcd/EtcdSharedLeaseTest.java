package dev.lease.etcd;

import static dev.lease.etcd.EtcdTesting.bytes;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;
import dev.lease.testing.EtcdServer;
import dev.lease.testing.TcpProxy;

/**
 * One etcd lease per ttl, shared by a backend's grants, on a real one-member etcd: what sharing must not change. A
 * grant's loss stays per grant; a release or an abandon never touches a successor's key; a key nobody holds any more
 * goes as it would with a lease of its own (released, given up on, or created late by an abandoned request), while the
 * lease lives on for the grants still held; the last grant revokes the lease.
 */
class EtcdSharedLeaseTest extends OneEtcdMember {

    /** Grants of one ttl share an etcd lease, another ttl has its own; the last release revokes each. */
    @Test
    void grantsOfOneTtlShareALeaseThatTheLastReleaseRevokes() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/share/", seconds(5));
        EtcdGrant a = grant(backend, "a", seconds(30));
        EtcdGrant b = grant(backend, "b", seconds(30));
        EtcdGrant other = grant(backend, "c", seconds(20));
        assertThat(b.leaseId()).as("same ttl, same etcd lease").isEqualTo(a.leaseId());
        assertThat(other.leaseId()).as("another ttl, another etcd lease").isNotEqualTo(a.leaseId());
        backend.release(a);
        assertThat(remainingSeconds(a.leaseId())).as("still used by b").isPositive();
        backend.release(b);
        backend.release(other);
        awaitRevoked(a.leaseId());
        awaitRevoked(other.leaseId());
    }

    /** Hundreds of grants (several transactions of compares) in one renewal call: exactly the broken ones are lost. */
    @Test
    void aBatchOfHundredsOfGrantsLosesExactlyTheKeysTakenAway() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/many/", seconds(10));
        List<EtcdGrant> grants = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            grants.add(grant(backend, "m" + i, seconds(30)));
        }
        assertThat(backend.renewAll(grants)).isEmpty();
        Set<EtcdGrant> broken = Set.of(grants.get(0), grants.get(129), grants.get(299));
        for (EtcdGrant grant : broken) {
            admin.getKVClient().delete(grant.key()).get(10, TimeUnit.SECONDS);
        }
        assertThat(backend.renewAll(grants)).containsExactlyInAnyOrderElementsOf(broken);
        for (EtcdGrant grant : grants) {
            backend.release(grant);
        }
    }

    /**
     * A key deleted by someone else and granted again on the same shared lease (same backend, same ttl): the old grant
     * is lost, its release leaves the successor's key, and the lease lives on for the successor.
     */
    @Test
    void aStaleReleaseOnTheSharedLeaseLeavesTheSuccessorsKey() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/successor/", seconds(5));
        EtcdGrant stale = grant(backend, "s", seconds(30));
        admin.getKVClient().delete(stale.key()).get(10, TimeUnit.SECONDS);
        EtcdGrant successor = grant(backend, "s", seconds(30));
        assertThat(successor.leaseId()).isEqualTo(stale.leaseId());
        assertThat(backend.renewAll(List.of(stale, successor))).containsExactly(stale);
        backend.release(stale);
        assertThat(backend.renew(successor)).as("the successor after the stale release").isTrue();
        assertThat(remainingSeconds(successor.leaseId())).isPositive();
        backend.release(successor);
    }

    /** Someone revokes the shared lease: its grants are lost (their keys are gone), a new grant gets a new lease. */
    @Test
    void aRevokedSharedLeaseLosesItsGrantsAndTheNextGrantGetsANewLease() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/revoked-shared/", seconds(5));
        EtcdGrant first = grant(backend, "r1", seconds(30));
        EtcdGrant second = grant(backend, "r2", seconds(30));
        admin.getLeaseClient().revoke(first.leaseId()).get(10, TimeUnit.SECONDS);
        EtcdGrant next = grant(backend, "r3", seconds(30));
        assertThat(next.leaseId()).as("a grant on the revoked lease is tried again on a new one")
                .isNotEqualTo(first.leaseId());
        assertThat(backend.renewAll(List.of(first, second, next))).containsExactlyInAnyOrder(first, second);
        backend.release(first);
        backend.release(second);
        backend.release(next);
    }

    /**
     * Grants the engine stopped renewing (lost to it, never released) go as they would with a lease of their own, a ttl
     * after their last renewal, although the lease lives on for the grant still renewed.
     */
    @Test
    void aGrantNoLongerRenewedGoesWithinItsTtlWhileTheSharedLeaseLivesOn() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/given-up/", seconds(5));
        Duration ttl = seconds(3);
        EtcdGrant renewed = grant(backend, "renewed", ttl);
        // Renewed just before, so the lease is known alive and the next grant joins it.
        assertThat(backend.renew(renewed)).isTrue();
        EtcdGrant forgotten = grant(backend, "forgotten", ttl);
        assertThat(forgotten.leaseId()).as("the same shared lease").isEqualTo(renewed.leaseId());
        await().atMost(ttl.plus(seconds(10))).pollInterval(Duration.ofMillis(300)).until(() -> {
            assertThat(backend.renewAll(List.of(renewed))).as("the grant still renewed").isEmpty();
            return !exists(forgotten);
        });
        assertThat(exists(renewed)).isTrue();
        assertThat(backend.renew(forgotten)).as("a grant given up on").isFalse();
        backend.release(forgotten);
        assertThat(backend.renew(renewed)).isTrue();
        backend.release(renewed);
    }

    /**
     * A release that never reached etcd: the key is deleted at a later renewal round of the other grants, which keep the
     * shared lease alive.
     */
    @Test
    void aKeyWhoseReleaseFailedIsDeletedByALaterRenewalRound() throws Exception {
        TcpProxy proxy = new TcpProxy(etcd.clientPort(0));
        closeAfter(proxy);
        EtcdLeaseBackend backend = backend(EtcdServer.url(proxy.port()), "/release-failed/", seconds(2));
        EtcdGrant released = grant(backend, "released", seconds(30));
        EtcdGrant kept = grant(backend, "kept", seconds(30));
        proxy.drop(true);
        assertThatThrownBy(() -> backend.release(released)).isInstanceOf(TimeoutException.class);
        proxy.reset();
        proxy.drop(false);
        assertThat(exists(released)).as("the release did not reach etcd").isTrue();
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            backend.renewAll(List.of(kept));
            return !exists(released);
        });
        assertThat(backend.renew(kept)).isTrue();
        assertThat(backend.leftoverCount()).isZero();
        backend.release(kept);
    }

    /**
     * A grant request whose answer came too late is abandoned: its key is deleted, its shared lease takes no new
     * grants, and a key its transaction creates later (as a retry delivered late would) is deleted at the next renewal
     * round, while the grant still held on that lease keeps its key.
     */
    @Test
    void anAbandonedRequestOnASharedLeaseLeavesNothingBehind() throws Exception {
        TcpProxy proxy = new TcpProxy(etcd.clientPort(0));
        closeAfter(proxy);
        EtcdLeaseBackend backend = backend(EtcdServer.url(proxy.port()), "/abandoned/", seconds(5));
        EtcdGrant held = grant(backend, "held", seconds(30));
        String attempt = UUID.randomUUID().toString();
        proxy.delayReplyAfter(attempt.getBytes(StandardCharsets.UTF_8), seconds(3));
        GrantRequest late = new GrantRequest("late", seconds(30), reason -> { }, attempt,
                System.nanoTime() + seconds(1).toNanos());
        assertThatThrownBy(() -> backend.tryAcquire(late)).isInstanceOf(TimeoutException.class);
        proxy.delayReplyAfter(null, Duration.ZERO);
        backend.abandon(late);
        assertThat(admin.getKVClient().get(bytes(backend.keyOf("late"))).get(10, TimeUnit.SECONDS).getCount())
                .as("the abandoned request's key").isZero();

        admin.getKVClient().put(bytes(backend.keyOf("late")), bytes(attempt),
                PutOption.builder().withLeaseId(held.leaseId()).build()).get(10, TimeUnit.SECONDS);
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertThat(backend.renewAll(List.of(held))).isEmpty();
            return admin.getKVClient().get(bytes(backend.keyOf("late"))).get(10, TimeUnit.SECONDS).getCount() == 0;
        });
        assertThat(exists(held)).isTrue();
        EtcdGrant next = grant(backend, "next", seconds(30));
        assertThat(next.leaseId()).as("the lease of an abandoned request takes no new grants")
                .isNotEqualTo(held.leaseId());
        backend.release(held);
        awaitRevoked(held.leaseId());
        assertThat(backend.leftoverCount()).as("forgotten with their lease").isZero();
        backend.release(next);
    }

    /** Grants requested at once by many threads all get their keys and all renew. */
    @Test
    void concurrentGrantsOfOneTtlAllHoldAndRenew() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/concurrent/", seconds(10));
        List<EtcdGrant> grants = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int first = t;
            Thread thread = new Thread(() -> {
                for (int i = first; i < 80; i += 8) {
                    try {
                        grants.add(grant(backend, "c" + i, seconds(30)));
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join(seconds(60).toMillis());
        }
        assertThat(grants).hasSize(80);
        assertThat(backend.renewAll(grants)).isEmpty();
        Set<Long> leases = new HashSet<>();
        grants.forEach(g -> leases.add(g.leaseId()));
        assertThat(leases.size()).as("etcd leases for 80 grants of one ttl").isLessThanOrEqualTo(8);
        for (EtcdGrant grant : grants) {
            backend.release(grant);
        }
        for (long lease : leases) {
            awaitRevoked(lease);
        }
    }

    private static EtcdGrant grant(EtcdLeaseBackend backend, String name, Duration ttl) throws Exception {
        return backend.tryAcquire(new GrantRequest(name, ttl, reason -> { })).orElseThrow();
    }

    private static boolean exists(EtcdGrant grant) throws Exception {
        return admin.getKVClient().get(grant.key()).get(10, TimeUnit.SECONDS).getKvs().stream()
                .anyMatch(kv -> kv.getCreateRevision() == grant.createRevision());
    }

    /** The revoke is sent, not awaited, by the last release: etcd soon no longer knows the lease. */
    private static void awaitRevoked(long leaseId) {
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> remainingSeconds(leaseId) == -1);
    }

    /** etcd's remaining ttl of the lease; -1 when it does not exist. */
    private static long remainingSeconds(long leaseId) throws Exception {
        return admin.getLeaseClient().timeToLive(leaseId, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getTTL();
    }
}
