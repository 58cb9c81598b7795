package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseConfigurationException;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/** ZooKeeper-specific behaviour on one real server: names, root, ttl limit, waiting, orphans. */
class ZooKeeperLeaseBackendTest {

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseBackendTest.class);
    private static final String ROOT = "/unit-leases";
    private static final Duration SESSION_TIMEOUT = seconds(6);

    private static TestingServer server;
    private static CuratorFramework firstClient;
    private static CuratorFramework secondClient;
    private static ZooKeeperLeaseBackend first;
    private static ZooKeeperLeaseBackend second;

    @BeforeAll
    static void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        firstClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        secondClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        first = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT);
        second = new ZooKeeperLeaseBackend(secondClient, ROOT, SESSION_TIMEOUT);
    }

    @AfterAll
    static void stop() throws Exception {
        first.close();
        second.close();
        firstClient.close();
        secondClient.close();
        server.close();
    }

    @ParameterizedTest
    @ValueSource(strings = { "emoji-\uD83D\uDE00", "private-\uE000", "special-\uFFF5" })
    void refusesNamesZooKeeperCannotHold(String name) {
        assertThatIllegalArgumentException().isThrownBy(() -> first.validateName(name))
                .withMessageContaining(name).withMessageContaining("zookeeper backend");
        try (LeaseEngine engine = engine(first)) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> engine.tryAcquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(3))))
                    .withMessageContaining(name);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "zookeeper", "invoice:42", "a.b", "über-ünïcödé", "with space" })
    void acceptsNamesThatAreOneSegmentUnderTheRoot(String name) throws Exception {
        first.validateName(name);
        Grant grant = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        try {
            assertThat(firstClient.checkExists().forPath(ROOT + "/" + name + "/holder")).isNotNull();
        }
        finally {
            first.release(grant);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "leases", "/", "/leases/", "/zookeeper", "/zookeeper/leases", "/a//b", "/a/./b",
            "/a/../b" })
    void refusesRootsThatAreNotOneAbsolutePath(String root) {
        assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperLeaseBackend(firstClient, root, SESSION_TIMEOUT))
                .withMessageContaining("lease.zookeeper.root");
    }

    @Test
    void maxTtlIsTheNegotiatedSessionTimeoutAndLongerTtlsAreRefused() throws Exception {
        int negotiated = firstClient.getZookeeperClient().getZooKeeper().getSessionTimeout();
        assertThat(first.maxTtl()).contains(Duration.ofMillis(negotiated));
        try (LeaseEngine engine = engine(first)) {
            assertThatThrownBy(() -> engine.tryAcquire(LeaseSpec.of("too-long", LeaseKind.CORRECTNESS)
                    .withTtl(Duration.ofMillis(negotiated).plusSeconds(1))))
                    .isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("too-long").hasMessageContaining("zookeeper");
        }
    }

    @Test
    void waitingIsWokenByTheReleaseAndTokensGrowAcrossInstances() throws Exception {
        String name = "handover";
        try (LeaseEngine engineA = engine(first); LeaseEngine engineB = engine(second)) {
            Lease held = engineA.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(3)));
            AtomicLong releasedAt = new AtomicLong();
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                try (Lease next = engineB.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(3))
                        .withWaitFor(seconds(30)))) {
                    long acquiredAt = System.nanoTime();
                    log.info("ZooKeeper handover release -> waiter holds it: "
                            + TimeUnit.NANOSECONDS.toMicros(acquiredAt - releasedAt.get()) / 1000.0 + " ms");
                    return next.token().value();
                }
            });
            // Let the waiter find the lease busy and park on its watch.
            awaitWatchOn(ROOT + "/" + name + "/holder");
            releasedAt.set(System.nanoTime());
            held.close();
            assertThat(waiter.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isGreaterThan(held.token().value());
        }
    }

    @Test
    void aHolderLeftByALostGrantResponseIsReplacedByAFreshGrantNotLeftBlockingTheName() throws Exception {
        String name = "orphan";
        Grant earlier = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        first.release(earlier);
        // What a grant whose response was lost leaves behind: the same multi, committed, with nobody told.
        firstClient.transaction().forOperations(
                firstClient.transactionOp().create().withMode(CreateMode.EPHEMERAL)
                        .forPath(ROOT + "/" + name + "/holder", first.instanceId()),
                firstClient.transactionOp().setData().forPath(ROOT + "/" + name, new byte[0]));
        Stat counter = firstClient.checkExists().forPath(ROOT + "/" + name);

        assertThat(second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).as("other instance").isEmpty();
        Grant fresh = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        assertThat(fresh.token().getAsLong()).as("a new token, not the orphan's").isGreaterThan(counter.getVersion());
        assertThat(first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).as("granted once").isEmpty();
        assertThat(first.renew(fresh)).isTrue();
        first.release(fresh);
        Grant next = second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        assertThat(next.token().getAsLong()).isGreaterThan(fresh.token().getAsLong());
        second.release(next);
    }

    @Test
    void aHolderOfTheSameSessionWrittenByAnotherBackendIsNotTouched() throws Exception {
        String name = "shared-session";
        try (ZooKeeperLeaseBackend sameClient = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT)) {
            Grant grant = sameClient.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
            try {
                assertThat(first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).isEmpty();
            }
            finally {
                sameClient.release(grant);
            }
        }
    }

    @Test
    void releaseChecksTheTokenSoAStaleGrantCannotDeleteItsSuccessor() throws Exception {
        String name = "stale-release";
        Grant stale = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        firstClient.delete().forPath(ROOT + "/" + name + "/holder");
        Grant successor = second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        first.release(stale);
        assertThat(first.renew(stale)).isFalse();
        assertThat(secondClient.checkExists().forPath(ROOT + "/" + name + "/holder")).as("successor's holder").isNotNull();
        assertThat(second.renew(successor)).isTrue();
        second.release(successor);
        assertThat(secondClient.checkExists().forPath(ROOT + "/" + name)).as("counter znode is never deleted").isNotNull();
    }

    /** Waits until the server holds a watch on {@code path}, read from its own "wchp" admin command. */
    private static void awaitWatchOn(String path) {
        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(10))
                .until(() -> ZooKeeperTesting.fourLetterWord(server.getPort(), "wchp").contains(path + "\n"));
    }

    private static LeaseEngine engine(LeaseBackend backend) {
        Map<LeaseKind, LeaseBackend> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
