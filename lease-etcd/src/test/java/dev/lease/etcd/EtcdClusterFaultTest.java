package dev.lease.etcd;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;
import dev.lease.testing.EtcdServer;

/**
 * Faults on a real three-member etcd cluster: the member the holder's client talks to is killed, or paused
 * ({@code kill -STOP}). The holder is interrupted before the rest of the cluster lets a successor in, the successor's
 * token is higher, and once the member is back the holder's client is granted leases again, with higher tokens still.
 */
class EtcdClusterFaultTest {

    private EtcdServer cluster;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        cluster = EtcdServer.start(3);
    }

    @AfterEach
    void stopCluster() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theMemberTheHolderTalksToIsKilled() throws Exception {
        EtcdLeaseBackend holder = backend(cluster.endpoint(0));
        EtcdLeaseBackend successor = backend(cluster.endpoint(1) + "," + cluster.endpoint(2));
        HolderVersusSuccessor.Outcome outcome = HolderVersusSuccessor.run(holder, successor, "killed", seconds(3),
                () -> cluster.kill(0));
        HolderVersusSuccessor.assertSafe(outcome);
        cluster.restart(0);
        assertGrantedAgain(holder, "killed", outcome.successorToken());
    }

    @Test
    void theMemberTheHolderTalksToIsPaused() throws Exception {
        EtcdLeaseBackend holder = backend(cluster.endpoint(0));
        EtcdLeaseBackend successor = backend(cluster.endpoint(1) + "," + cluster.endpoint(2));
        HolderVersusSuccessor.Outcome outcome = HolderVersusSuccessor.run(holder, successor, "paused", seconds(3),
                () -> cluster.pause(0));
        HolderVersusSuccessor.assertSafe(outcome);
        cluster.resume(0);
        assertGrantedAgain(holder, "paused", outcome.successorToken());
    }

    /** A client on every member rides over the loss of one: leases are granted and renewed through the others. */
    @Test
    void aClientOnEveryMemberKeepsWorkingWhenOneIsKilled() throws Exception {
        EtcdLeaseBackend backend = backend(cluster.endpoints());
        EtcdGrant before = backend.tryAcquire(new GrantRequest("ride", seconds(30), reason -> { })).orElseThrow();
        backend.release(before);
        cluster.kill(0);
        AtomicReference<EtcdGrant> after = new AtomicReference<>();
        await().atMost(seconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            backend.tryAcquire(new GrantRequest("ride", seconds(30), reason -> { })).ifPresent(after::set);
            return after.get() != null;
        });
        assertThat(after.get().createRevision()).isGreaterThan(before.createRevision());
        await().atMost(seconds(30)).ignoreExceptions().until(() -> backend.renew(after.get()));
        backend.release(after.get());
    }

    private void assertGrantedAgain(EtcdLeaseBackend holder, String name, long above) {
        AtomicReference<EtcdGrant> again = new AtomicReference<>();
        await().atMost(seconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            Optional<EtcdGrant> granted = holder.tryAcquire(new GrantRequest(name, seconds(30), reason -> { }));
            granted.ifPresent(again::set);
            return granted.isPresent();
        });
        assertThat(again.get().createRevision()).as("token after the member is back").isGreaterThan(above);
    }

    private EtcdLeaseBackend backend(String endpoints) {
        Client client = EtcdTesting.client(endpoints);
        EtcdLeaseBackend backend = new EtcdLeaseBackend(client, "/cluster/", seconds(5));
        closeables.add(client);
        closeables.add(backend);
        return backend;
    }
}
