package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.BackendRouter;
import dev.lease.LeaseConfigurationException;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TcpProxy;

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
        var grant = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
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
        assertThat(first.traits().maxTtl()).contains(Duration.ofMillis(negotiated));
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
        var earlier = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        first.release(earlier);
        // What a grant whose response was lost leaves behind: the same multi, committed, with nobody told.
        firstClient.transaction().forOperations(
                firstClient.transactionOp().create().withMode(CreateMode.EPHEMERAL)
                        .forPath(ROOT + "/" + name + "/holder", first.instanceId()),
                firstClient.transactionOp().setData().forPath(ROOT + "/" + name, new byte[0]));
        Stat counter = firstClient.checkExists().forPath(ROOT + "/" + name);

        assertThat(second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).as("other instance").isEmpty();
        var fresh = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        assertThat(fresh.token().getAsLong()).as("a new token, not the orphan's").isGreaterThan(counter.getVersion());
        assertThat(first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).as("granted once").isEmpty();
        assertThat(first.renew(fresh)).isTrue();
        first.release(fresh);
        var next = second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        assertThat(next.token().getAsLong()).isGreaterThan(fresh.token().getAsLong());
        second.release(next);
    }

    @Test
    void aHolderOfTheSameSessionWrittenByAnotherBackendIsNotTouched() throws Exception {
        String name = "shared-session";
        try (ZooKeeperLeaseBackend sameClient = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT)) {
            var grant = sameClient.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
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
        var stale = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        firstClient.delete().forPath(ROOT + "/" + name + "/holder");
        var successor = second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        first.release(stale);
        assertThat(first.renew(stale)).isFalse();
        assertThat(secondClient.checkExists().forPath(ROOT + "/" + name + "/holder")).as("successor's holder").isNotNull();
        assertThat(second.renew(successor)).isTrue();
        second.release(successor);
        assertThat(secondClient.checkExists().forPath(ROOT + "/" + name)).as("counter znode is never deleted").isNotNull();
    }

    @Test
    void aGrantInterruptedWhileItsRequestIsInFlightLeavesNothingBehindOnceAbandoned() throws Exception {
        String name = "interrupted-in-flight";
        int before = counterVersion(name);
        try (TcpProxy proxy = new TcpProxy(server.getPort());
                CuratorFramework proxied = ZooKeeperTesting.client(proxy.address(), SESSION_TIMEOUT);
                ZooKeeperLeaseBackend viaProxy = new ZooKeeperLeaseBackend(proxied, ROOT, SESSION_TIMEOUT)) {
            GrantRequest request = new GrantRequest(name, seconds(3), reason -> { });
            // Frozen, the link holds the request: the caller waits for an answer that cannot come yet.
            proxy.freeze();
            InFlight call = new InFlight(() -> viaProxy.tryAcquire(request));
            call.awaitWaitingForTheMulti();
            call.thread.interrupt();
            assertThat(call.outcome).failsWithin(seconds(20)).withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(InterruptedException.class);
            proxy.unfreeze();

            viaProxy.abandon(request);

            assertThat(counterVersion(name)).as("the interrupted grant was committed all the same").isGreaterThan(before);
            assertSecondInstanceGets(name);
        }
    }

    @Test
    void aGrantRequestedWithTheInterruptAlreadySetLeavesNothingBehindOnceAbandoned() throws Exception {
        String name = "interrupted-before";
        int before = counterVersion(name);
        GrantRequest request = new GrantRequest(name, seconds(3), reason -> { });
        InFlight call = new InFlight(() -> {
            Thread.currentThread().interrupt();
            return first.tryAcquire(request);
        });
        assertThat(call.outcome).failsWithin(seconds(20)).withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(InterruptedException.class);

        first.abandon(request);

        assertThat(counterVersion(name)).as("the interrupted grant was committed all the same").isGreaterThan(before);
        assertSecondInstanceGets(name);
    }

    @Test
    void anEngineWhoseAcquireIsInterruptedMidRequestLeavesTheLeaseToOtherInstances() throws Exception {
        String name = "engine-interrupted";
        int before = counterVersion(name);
        try (TcpProxy proxy = new TcpProxy(server.getPort());
                CuratorFramework proxied = ZooKeeperTesting.client(proxy.address(), SESSION_TIMEOUT);
                ZooKeeperLeaseBackend viaProxy = new ZooKeeperLeaseBackend(proxied, ROOT, SESSION_TIMEOUT);
                LeaseEngine engine = engine(viaProxy)) {
            proxy.freeze();
            InFlight call = new InFlight(() -> engine.tryAcquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS)
                    .withTtl(seconds(3))));
            // The engine asks ZooKeeper on a helper thread, which it never interrupts; the caller's wait is interrupted.
            InFlight.awaitWaitingForTheMulti(() -> Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("lease-call")).toList());
            call.thread.interrupt();
            assertThat(call.outcome).failsWithin(seconds(20)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOf(LeaseUnavailableException.class)
                    .withCauseInstanceOf(InterruptedException.class);
            proxy.unfreeze();

            // The engine abandons the request in the background; until then the name may still look busy.
            await().atMost(seconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> grantAndRelease(second, name));
            assertThat(counterVersion(name)).as("granted twice: the interrupted grant, then the second instance's")
                    .isGreaterThanOrEqualTo(before + 2);
        }
    }

    @Test
    void abandonLeavesAHolderOfAnotherInstanceAlone() throws Exception {
        String name = "abandon-not-ours";
        var held = second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        GrantRequest refused = new GrantRequest(name, seconds(3), reason -> { });
        assertThat(first.tryAcquire(refused)).isEmpty();

        first.abandon(refused);

        assertThat(second.renew(held)).as("the other instance's grant survives").isTrue();
        second.release(held);
    }

    @Test
    void abandonLeavesAHolderThatALiveGrantOfTheSameInstanceClaimsAlone() throws Exception {
        String name = "abandon-live";
        var held = first.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow();
        // Another request of this instance for the name failed meanwhile: its abandon must not take the live grant.
        first.abandon(new GrantRequest(name, seconds(3), reason -> { }));

        assertThat(first.renew(held)).as("the live grant survives").isTrue();
        assertThat(second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }))).as("still busy").isEmpty();
        first.release(held);
    }

    /** The counter's version (the last token granted), after creating the counter if the name is new. */
    private static int counterVersion(String name) throws Exception {
        if (secondClient.checkExists().forPath(ROOT + "/" + name) == null) {
            second.release(second.tryAcquire(new GrantRequest(name, seconds(3), reason -> { })).orElseThrow());
        }
        return secondClient.checkExists().forPath(ROOT + "/" + name).getVersion();
    }

    private static void assertSecondInstanceGets(String name) throws Exception {
        assertThat(grantAndRelease(second, name)).as("another instance gets the lease").isTrue();
    }

    private static <G extends Grant> boolean grantAndRelease(LeaseBackend<G> backend, String name) throws Exception {
        Optional<G> grant = backend.tryAcquire(new GrantRequest(name, seconds(3), reason -> { }));
        if (grant.isPresent()) {
            backend.release(grant.get());
        }
        return grant.isPresent();
    }

    /** A call on a thread of its own, so that the test can interrupt it in the middle of a request. */
    private static final class InFlight {

        final CompletableFuture<Object> outcome = new CompletableFuture<>();
        final Thread thread;

        InFlight(Callable<?> call) {
            thread = new Thread(() -> {
                try {
                    outcome.complete(call.call());
                }
                catch (Throwable ex) {
                    outcome.completeExceptionally(ex);
                }
            }, "in-flight-grant");
            thread.start();
        }

        /**
         * Waits until the thread waits for the answer to a ZooKeeper multi: the client has queued the request by
         * then, so it reaches the server whatever happens to the thread.
         */
        void awaitWaitingForTheMulti() {
            awaitWaitingForTheMulti(() -> List.of(thread));
        }

        static void awaitWaitingForTheMulti(Supplier<List<Thread>> candidates) {
            await().atMost(seconds(10)).pollInterval(Duration.ofMillis(1)).until(() -> candidates.get().stream()
                    .anyMatch(InFlight::waitsForTheMulti));
        }

        private static boolean waitsForTheMulti(Thread thread) {
            Thread.State state = thread.getState();
            StackTraceElement[] stack = thread.getStackTrace();
            return (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)
                    && Arrays.stream(stack).anyMatch(f -> f.getClassName().equals(ZooKeeper.class.getName())
                            && f.getMethodName().equals("multi"))
                    && Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals("submitRequest"));
        }
    }

    /** Waits until the server holds a watch on {@code path}, read from its own "wchp" admin command. */
    private static void awaitWatchOn(String path) {
        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(10))
                .until(() -> ZooKeeperTesting.fourLetterWord(server.getPort(), "wchp").contains(path + "\n"));
    }

    private static LeaseEngine engine(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
