package dev.lease.etcd;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.testing.EtcdServer;

/**
 * One follower of a three-member cluster paused ({@code kill -STOP}) while the quorum and its leader go on: a client
 * that knows every member keeps its leases. Its channel still counts the paused member as ready (the TCP connection is
 * open, only silent), so about one call in three goes there and hangs; each idempotent call of a renewal round is sent
 * again, to another member, well before the round's deadline. The client has jetcd's default gRPC keep-alive (30 s), so
 * the paused member stays in the rotation for the whole test: the backend alone must ride over it.
 */
class EtcdPausedFollowerTest {

    private static final Duration TTL = seconds(6);

    private EtcdServer cluster;
    private Client client;
    private EtcdLeaseBackend backend;
    private LeaseEngine engine;
    private int paused = -1;

    @BeforeEach
    void start() throws Exception {
        cluster = EtcdServer.start(3);
        client = Client.builder().endpoints(cluster.endpoints().split(",")).build();
        // A renewal round's deadline of half the ttl (the default 5 s is a sixth of lease.default-ttl's 30 s): before
        // the fix, a keep-alive or check sent to the paused member failed its round when it passed, losing the batch.
        backend = new EtcdLeaseBackend(client, "/paused/", TTL.dividedBy(2));
        engine = EtcdTesting.engine(backend);
    }

    @AfterEach
    void stop() throws Exception {
        try {
            if (paused >= 0) {
                cluster.resume(paused);
            }
        }
        finally {
            if (engine != null) {
                engine.close();
            }
            if (backend != null) {
                backend.close();
            }
            if (client != null) {
                client.close();
            }
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Test
    void leasesAreHeldForSeveralTtlsWhileAFollowerIsPaused() throws Exception {
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            held.add(engine.acquire(LeaseSpec.of("paused-" + i, LeaseKind.CORRECTNESS).withTtl(TTL)
                    .withWaitFor(seconds(10))));
        }
        int leader = cluster.leader(0);
        paused = (leader + 1) % cluster.size();
        cluster.pause(paused);

        // Three ttls: nine renewal rounds, each with about one call in three sent to the silent member.
        await("leases held while member " + paused + " (a follower; the leader is " + leader + ") is paused")
                .during(TTL.multipliedBy(3)).atMost(TTL.multipliedBy(4)).pollInterval(Duration.ofMillis(100))
                .until(() -> held.stream().allMatch(Lease::isValid));
        assertThat(cluster.leader((paused + 1) % cluster.size())).as("the leader stayed").isEqualTo(leader);
        held.forEach(Lease::close);
    }
}
