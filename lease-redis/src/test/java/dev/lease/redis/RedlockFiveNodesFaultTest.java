package dev.lease.redis;

import static dev.lease.testing.TestTiming.scaled;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.LeaseEngine;

/** Redlock on five real redis-server processes: two nodes lost are survived, three are not, and leave nothing. */
class RedlockFiveNodesFaultTest {

    private static RedlockNodes nodes;
    private static RedlockLeaseBackend backend;
    private static LeaseEngine engine;

    @BeforeAll
    static void startNodes() throws Exception {
        nodes = new RedlockNodes(5);
        backend = nodes.backend("five:");
        engine = RedlockNodeFaultTest.engineOver(backend);
    }

    @AfterAll
    static void stopNodes() {
        engine.close();
        nodes.close();
    }

    @AfterEach
    void unfreeze() throws Exception {
        for (int i = 0; i < nodes.size(); i++) {
            nodes.proxy(i).unfreeze();
            if (!nodes.server(i).isRunning()) {
                nodes.server(i).restart();
            }
        }
        await().atMost(seconds(60)).until(() -> !backend.checkHealth(seconds(2)).toString().matches(".*(failed|no answer).*"));
    }

    @Test
    void twoNodesDownOfFiveStillGrantOnTheMajorityOfThree() throws Exception {
        nodes.server(0).stop();
        nodes.proxy(3).freeze();
        String name = "two-down-" + System.nanoTime();
        try (Lease lease = engine.acquire(LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(seconds(10))
                .withWaitFor(seconds(10)))) {
            assertThat(lease.isValid()).isTrue();
            assertThat(nodes.holding(backend.key(name))).isEqualTo(3);
        }
        assertThat(nodes.holding(backend.key(name))).isZero();
    }

    @Test
    void threeNodesFrozenOfFiveNoGrantAndNothingLeftBehind() throws Exception {
        String name = "three-frozen-" + System.nanoTime();
        String key = backend.key(name);
        nodes.proxy(1).freeze();
        nodes.proxy(2).freeze();
        nodes.proxy(4).freeze();
        assertThatThrownBy(() -> engine.acquire(LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(seconds(10))
                .withWaitFor(scaled(Duration.ofMillis(1500))))).isInstanceOf(LeaseUnavailableException.class)
                .hasStackTraceContaining("fewer than a majority (3)");
        nodes.proxy(1).unfreeze();
        nodes.proxy(2).unfreeze();
        nodes.proxy(4).unfreeze();
        await().during(scaled(Duration.ofMillis(500))).atMost(seconds(20)).until(() -> nodes.holding(key) == 0);
    }
}
