package dev.lease.etcd;

import static dev.lease.etcd.EtcdTesting.bytes;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.EtcdServer;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * Faults on a real one-member etcd: a key deleted behind its holder's back, a keep-alive that succeeds although the key
 * is gone, and the holder's link frozen until etcd expires its lease.
 */
class EtcdLeaseFaultTest extends OneEtcdMember {

    /**
     * etcd#14758: a keep-alive can succeed after the key is gone. Here the key is deleted and its etcd lease left alive,
     * so the keep-alive really does succeed: the renewal must still report the grant lost.
     */
    @Test
    void aKeepAliveThatSucceedsAfterTheKeyIsGoneIsALoss() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/keepalive/");
        EtcdGrant grant = backend.tryAcquire(new GrantRequest("gone", seconds(30), reason -> { })).orElseThrow();
        EtcdGrant other = backend.tryAcquire(new GrantRequest("kept", seconds(30), reason -> { })).orElseThrow();
        admin.getKVClient().delete(bytes(backend.keyOf("gone"))).get(10, TimeUnit.SECONDS);

        LeaseKeepAliveResponse keepAlive = admin.getLeaseClient().keepAliveOnce(grant.leaseId()).get(10, TimeUnit.SECONDS);
        assertThat(keepAlive.getTTL()).as("the keep-alive of the deleted key's lease succeeds").isPositive();
        assertThat(backend.renewAll(List.of(grant, other))).as("lost").containsExactly(grant);
        assertThat(backend.renew(grant)).as("renew alone").isFalse();
        assertThat(backend.renew(other)).as("the other grant").isTrue();
        backend.release(other);
        backend.release(grant);
    }

    /**
     * A revoked etcd lease fails the grants bound to it in a batch renewal, not the others of the batch (grants of
     * another ttl have another lease; those sharing the revoked one: {@code EtcdSharedLeaseTest}).
     */
    @Test
    void aRevokedLeaseIsLostAloneInItsBatch() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/revoked/");
        EtcdGrant revoked = backend.tryAcquire(new GrantRequest("r", seconds(30), reason -> { })).orElseThrow();
        EtcdGrant kept = backend.tryAcquire(new GrantRequest("k", seconds(20), reason -> { })).orElseThrow();
        admin.getLeaseClient().revoke(revoked.leaseId()).get(10, TimeUnit.SECONDS);
        assertThat(backend.renewAll(List.of(revoked, kept))).as("lost").containsExactly(revoked);
        backend.release(kept);
    }

    /** A key re-created by someone else (same name, new create_revision) is not ours either. */
    @Test
    void aKeyCreatedAnewBySomeoneElseIsALoss() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/recreated/");
        EtcdGrant grant = backend.tryAcquire(new GrantRequest("x", seconds(30), reason -> { })).orElseThrow();
        admin.getKVClient().delete(bytes(backend.keyOf("x"))).get(10, TimeUnit.SECONDS);
        admin.getKVClient().put(bytes(backend.keyOf("x")), bytes("intruder")).get(10, TimeUnit.SECONDS);
        assertThat(backend.renew(grant)).isFalse();
        backend.release(grant);
        assertThat(admin.getKVClient().get(bytes(backend.keyOf("x"))).get(10, TimeUnit.SECONDS).getCount())
                .as("the stale release leaves the other key alone").isEqualTo(1);
        admin.getKVClient().delete(bytes(backend.keyOf("x"))).get(10, TimeUnit.SECONDS);
    }

    /** Someone deletes the holder's key: the next renewal notices, the holder is interrupted, its caller is told. */
    @Test
    void aKeyDeletedBySomeoneElseIsNoticedOnTheNextRenewal() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/deleted/");
        Duration ttl = seconds(3);
        BlockingWork work = new BlockingWork();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LeaseEngine engine = HolderVersusSuccessor.engine(backend)) {
            Future<String> call = pool.submit(() -> engine.execute(
                    LeaseSpec.of("deleted", LeaseKind.CORRECTNESS).withTtl(ttl).withWaitFor(seconds(10)), work));
            assertThat(work.awaitStarted(seconds(30))).isTrue();
            admin.getKVClient().delete(bytes(backend.keyOf("deleted"))).get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> call.get(ttl.plus(seconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("deleted");
            assertThat(work.wasInterrupted()).isTrue();
        }
        finally {
            pool.shutdownNow();
        }
    }

    /**
     * The holder's link to etcd freezes (no RST, no FIN) until etcd expires its lease: the holder is interrupted before
     * etcd lets the successor in, and the successor's token is higher.
     */
    @Test
    void aFrozenLinkInterruptsTheHolderBeforeTheServerLetsAnyoneIn() throws Exception {
        TcpProxy proxy = new TcpProxy(etcd.clientPort(0));
        closeAfter(proxy);
        EtcdLeaseBackend holder = backend(EtcdServer.url(proxy.port()), "/frozen/");
        EtcdLeaseBackend successor = backend(etcd.endpoints(), "/frozen/");
        HolderVersusSuccessor.Outcome outcome = HolderVersusSuccessor.run(holder, successor, "frozen", seconds(3),
                proxy::freeze);
        HolderVersusSuccessor.assertSafe(outcome);
        proxy.unfreeze();
    }

    /** A waiter is woken by the release (a watch on the key's deletion), and the watch is gone when nobody waits. */
    @Test
    void aWaiterIsWokenByTheReleaseAndTheSharedWatchCloses() throws Exception {
        EtcdLeaseBackend holder = backend(etcd.endpoints(), "/waiters/");
        EtcdLeaseBackend waiting = backend(etcd.endpoints(), "/waiters/");
        EtcdGrant grant = holder.tryAcquire(new GrantRequest("w", seconds(30), reason -> { })).orElseThrow();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Long>> waits = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                waits.add(pool.submit(() -> {
                    long start = System.nanoTime();
                    waiting.awaitRelease("w", seconds(60));
                    return System.nanoTime() - start;
                }));
            }
            org.awaitility.Awaitility.await().atMost(seconds(10)).until(() -> waiting.watchedKeys() == 1);
            Thread.sleep(TestTiming.millis(200).toMillis());
            holder.release(grant);
            for (Future<Long> wait : waits) {
                assertThat(Duration.ofNanos(wait.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS)))
                        .as("woken by the release, long before maxWait").isLessThan(seconds(30));
            }
            org.awaitility.Awaitility.await().atMost(seconds(10)).until(() -> waiting.watchedKeys() == 0);
        }
        finally {
            pool.shutdownNow();
        }
    }

    /** An abandoned request removes the key it created (its attempt id in the value), never a successor's. */
    @Test
    void anAbandonRemovesOnlyTheKeyOfItsOwnRequest() throws Exception {
        EtcdLeaseBackend backend = backend(etcd.endpoints(), "/abandon/");
        GrantRequest request = new GrantRequest("a", seconds(30), reason -> { });
        backend.tryAcquire(request).orElseThrow();
        backend.abandon(request);
        EtcdGrant successor = backend.tryAcquire(new GrantRequest("a", seconds(30), reason -> { })).orElseThrow();
        backend.abandon(request);
        assertThat(backend.renew(successor)).as("the successor survives a second abandon").isTrue();
        backend.release(successor);
    }
}
