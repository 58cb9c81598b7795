package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watcher;

/** Waiters sharing one watch: who is woken by a release the watch delivered before they joined. */
class ObjectWatchesTest {

    private static MockApiServer server;
    private static KubernetesClient client;

    @BeforeAll
    static void start() {
        server = new MockApiServer();
        client = server.client(seconds(10));
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    /**
     * A waiter that read the Lease before the release is woken at once; one that read it after (held again) waits:
     * waking it would send it back to a busy lease at once, over and over while the watch stays open.
     */
    @Test
    void onlyAWaiterThatReadBeforeTheReleaseIsWokenByIt() throws Exception {
        ObjectWatches watches = new ObjectWatches(client, "test");
        ObjectWatches.ObjectWatch first = watches.join("lease-shared", "5");
        try {
            first.eventReceived(Watcher.Action.MODIFIED, new LeaseBuilder().withNewMetadata().withName("lease-shared")
                    .withResourceVersion("10").endMetadata().withNewSpec().endSpec().build());
            assertThat(first.await(System.nanoTime() + seconds(5).toNanos())).as("first waiter woken, watch not broken")
                    .isFalse();
            assertThat(joinAndWait(watches, "7")).as("read before the release: woken at once").isTrue();
            assertThat(joinAndWait(watches, "12")).as("read after the release: still waiting").isFalse();
        }
        finally {
            watches.leave(first);
        }
    }

    /** Joins on another thread and says whether it was woken within a short while. */
    private static boolean joinAndWait(ObjectWatches watches, String readVersion) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            ObjectWatches.ObjectWatch watch = watches.join("lease-shared", readVersion);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            try {
                watch.await(until);
                return System.nanoTime() - until < 0;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            finally {
                watches.leave(watch);
            }
        }).get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    }

}
