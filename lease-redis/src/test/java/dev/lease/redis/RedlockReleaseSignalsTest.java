package dev.lease.redis;

import static dev.lease.testing.TestTiming.scaled;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;

/**
 * A Redlock waiter wakes on the nodes' release messages, once a majority of them announced the release, long before
 * its wait or the key's time to live would end it; one announcement (a minority) is not enough.
 */
class RedlockReleaseSignalsTest {

    private static final Duration LONG = seconds(120);

    private static RedlockNodes nodes;
    private static RedlockLeaseBackend backend;

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void startNodes() throws Exception {
        nodes = new RedlockNodes(3);
        backend = nodes.backend("signals:");
    }

    @AfterAll
    static void stopNodes() {
        nodes.close();
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    @Test
    void aReleaseOnTheNodesWakesTheWaiterBeforeItsWaitOrTheTtlEnds() throws Exception {
        String name = "released-" + System.nanoTime();
        RedlockGrant grant = backend.tryAcquire(new GrantRequest(name, LONG, reason -> { })).orElseThrow();
        Future<?> waiting = pool.submit(() -> {
            backend.awaitRelease(name, LONG);
            return null;
        });
        awaitSubscribedOnEveryNode();
        assertThat(waiting.isDone()).as("waits while held").isFalse();
        backend.release(grant);
        await().atMost(seconds(30)).until(waiting::isDone);
        waiting.get();
    }

    @Test
    void aMinorityOfAnnouncementsDoesNotWakeTheWaiterAMajorityDoes() throws Exception {
        String name = "minority-" + System.nanoTime();
        RedlockGrant grant = backend.tryAcquire(new GrantRequest(name, LONG, reason -> { })).orElseThrow();
        Future<?> waiting = pool.submit(() -> {
            backend.awaitRelease(name, LONG);
            return null;
        });
        awaitSubscribedOnEveryNode();
        String channel = "signals:released";
        assertThat(nodes.admin(0).convertAndSend(channel, name)).as("receivers on node 1").isEqualTo(1L);
        await().during(scaled(Duration.ofSeconds(1))).atMost(seconds(30)).until(() -> !waiting.isDone());
        assertThat(nodes.admin(1).convertAndSend(channel, name)).as("receivers on node 2").isEqualTo(1L);
        await().atMost(seconds(30)).until(waiting::isDone);
        backend.release(grant);
    }

    /** Probes with a name nobody waits for, so that no probe counts as a release of the name waited for. */
    private static void awaitSubscribedOnEveryNode() {
        for (int i = 0; i < nodes.size(); i++) {
            int node = i;
            await().atMost(seconds(30)).until(() -> {
                Long receivers = nodes.admin(node).convertAndSend("signals:released", "probe-nobody-waits-for");
                return receivers != null && receivers >= 1;
            });
        }
    }
}
