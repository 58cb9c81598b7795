package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseUnavailableException;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.BlockingWork;

/** Faults on a real server of its own per test: restarts, a stopped server, a frozen network, a real expiry. */
class ZooKeeperLeaseFaultTest {

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseFaultTest.class);
    private static final String ROOT = "/fault-leases";
    /** Short, so that a real expiry fits in a test; the ttls below stay under it. */
    private static final Duration SESSION_TIMEOUT = seconds(3);

    private TestingServer server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = ZooKeeperTesting.startServer();
    }

    @AfterEach
    void stopAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        server.close();
    }

    @Test
    void tokensKeepIncreasingAcrossAServerRestart() throws Exception {
        ZooKeeperLeaseBackend backend = backend(client(server.getConnectString()));
        String name = "restart";
        long before = 0;
        for (int i = 0; i < 3; i++) {
            var grant = backend.tryAcquire(request(name)).orElseThrow();
            assertThat(grant.token().getAsLong()).isGreaterThan(before);
            before = grant.token().getAsLong();
            backend.release(grant);
        }

        server.restart();

        AtomicReference<ZkGrant> after = new AtomicReference<>();
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> backend.tryAcquire(request(name)).map(g -> { after.set(g); return g; }).isPresent());
        assertThat(after.get().token().getAsLong()).as("token after restart, same client").isGreaterThan(before);
        backend.release(after.get());

        ZooKeeperLeaseBackend newcomer = backend(client(server.getConnectString()));
        var fresh = newcomer.tryAcquire(request(name)).orElseThrow();
        assertThat(fresh.token().getAsLong()).as("token after restart, new process").isGreaterThan(after.get().token().getAsLong());
        newcomer.release(fresh);
    }

    @Test
    void stoppingTheServerInterruptsTheHolderAndTheCallerGetsLeaseLostException() throws Exception {
        LeaseEngine engine = engine(backend(client(server.getConnectString())));
        String name = "server-stopped";
        BlockingWork work = new BlockingWork();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        closeables.add(pool::shutdownNow);
        Future<String> call = pool.submit(() -> engine.execute(
                LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT).withWaitFor(seconds(10)), work));
        assertThat(work.awaitStarted(seconds(20))).isTrue();

        long stoppedAt = System.nanoTime();
        server.stop();

        assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseLostException.class)
                .hasMessageContaining(name)
                .hasMessageContaining("SUSPENDED")
                .hasCauseInstanceOf(InterruptedException.class);
        log.info("ZooKeeper server stopped -> caller got LeaseLostException after "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt) + " ms");
    }

    /**
     * A holder cut off by a frozen network (no FIN, no RST: silence) hears SUSPENDED before the server expires its
     * session, so it has stopped trusting the lease before anyone else can get it; after the expiry another process
     * gets it with a higher token, and the old holder can neither renew nor release it.
     */
    @Test
    void aRealSessionExpiryHandsTheLeaseOverWithAHigherTokenAfterTheHolderWasTold() throws Exception {
        TcpProxy proxy = new TcpProxy(server.getPort());
        closeables.add(proxy);
        CuratorFramework cutOffClient = client(proxy.address());
        ZooKeeperLeaseBackend cutOff = backend(cutOffClient);
        ZooKeeperLeaseBackend other = backend(client(server.getConnectString()));
        String name = "expiry";
        AtomicLong toldLostAt = new AtomicLong();
        AtomicReference<String> reason = new AtomicReference<>();
        var stale = cutOff.tryAcquire(new GrantRequest(name, SESSION_TIMEOUT, why -> {
            reason.compareAndSet(null, why);
            toldLostAt.compareAndSet(0, System.nanoTime());
        })).orElseThrow();
        long expiredSession = cutOffClient.getZookeeperClient().getZooKeeper().getSessionId();

        long frozenAt = System.nanoTime();
        proxy.freeze();

        AtomicReference<ZkGrant> successor = new AtomicReference<>();
        AtomicLong grantedAt = new AtomicLong();
        await().atMost(SESSION_TIMEOUT.multipliedBy(3).plus(seconds(10))).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    other.tryAcquire(request(name)).ifPresent(g -> {
                        grantedAt.set(System.nanoTime());
                        successor.set(g);
                    });
                    return successor.get() != null;
                });
        log.info("ZooKeeper frozen network: holder told after " + TimeUnit.NANOSECONDS.toMillis(toldLostAt.get() - frozenAt)
                + " ms, successor granted after " + TimeUnit.NANOSECONDS.toMillis(grantedAt.get() - frozenAt) + " ms");
        assertThat(toldLostAt.get()).as("holder told of the loss").isNotZero();
        assertThat(toldLostAt.get() - grantedAt.get()).as("holder told before the successor was granted").isNegative();
        assertThat(reason.get()).contains("SUSPENDED");
        assertThat(successor.get().token().getAsLong()).isGreaterThan(stale.token().getAsLong());

        proxy.unfreeze();
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> cutOffClient.getZookeeperClient()
                .isConnected() && cutOffClient.getZookeeperClient().getZooKeeper().getSessionId() != expiredSession);
        assertThat(cutOff.renew(stale)).as("stale holder renews").isFalse();
        cutOff.release(stale);
        assertThat(other.renew(successor.get())).as("successor keeps it after the stale release").isTrue();
        other.release(successor.get());
    }

    /**
     * A waiter whose client is cut off by a frozen network while the lease is busy gives up at its waitFor (plus a
     * bound) with the store named unreachable, instead of sitting through Curator's connection timeouts and retries,
     * and never reports the lease held by someone else.
     */
    @Test
    void aWaiterCutOffByAFrozenNetworkGivesUpAtItsWaitForNamingTheUnreachableStore() throws Exception {
        TcpProxy proxy = new TcpProxy(server.getPort());
        closeables.add(proxy);
        LeaseEngine holders = engine(backend(client(server.getConnectString())));
        LeaseEngine waiters = engine(backend(productionLikeClient(proxy.address())));
        closeables.add(proxy::unfreeze); // first thing on closing: let the stuck calls end

        assertWaiterGivesUpInTime(holders, waiters, "frozen-waiter", proxy::freeze);
    }

    /** The same with the server stopped: the connection is refused rather than silent. */
    @Test
    void aWaiterWhoseServerStopsGivesUpAtItsWaitForNamingTheUnreachableStore() throws Exception {
        LeaseEngine holders = engine(backend(client(server.getConnectString())));
        LeaseEngine waiters = engine(backend(productionLikeClient(server.getConnectString())));

        assertWaiterGivesUpInTime(holders, waiters, "stopped-waiter", server::stop);
    }

    private void assertWaiterGivesUpInTime(LeaseEngine holders, LeaseEngine waiters, String name, Outage outage)
            throws Exception {
        Lease held = holders.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT));
        closeables.add(held);
        Duration waitFor = Duration.ofMillis(1500);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        closeables.add(pool::shutdownNow);
        long start = System.nanoTime();
        Future<Lease> waiter = pool.submit(() -> waiters.acquire(
                LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT).withWaitFor(waitFor)));
        Thread.sleep(300); // waiting on the busy lease by now
        outage.begin();

        assertThatThrownBy(() -> waiter.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseUnavailableException.class)
                .hasMessageContaining("'" + name + "'")
                .hasMessageContaining("zookeeper store could not be reached")
                .hasMessageNotContaining("held by someone else");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info("ZooKeeper outage: waiter with waitFor " + waitFor.toMillis() + " ms gave up after " + took.toMillis()
                + " ms");
        assertThat(took).as("waitFor plus a bound").isLessThanOrEqualTo(waitFor.plus(seconds(3)));
    }

    @FunctionalInterface
    private interface Outage {
        void begin() throws Exception;
    }

    /**
     * Settings like the auto-configuration's: a session long enough that a frozen connection still looks connected
     * for seconds, and retries (each waiting up to the connection timeout) that outlast any short waitFor.
     */
    private CuratorFramework productionLikeClient(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) Duration.ofSeconds(15).toMillis())
                .connectionTimeoutMs(2000)
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2000))
                .build();
        client.start();
        closeables.add(client);
        assertThat(client.blockUntilConnected((int) seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        return client;
    }

    private CuratorFramework client(String connectString) throws InterruptedException {
        CuratorFramework client = ZooKeeperTesting.client(connectString, SESSION_TIMEOUT);
        closeables.add(client);
        return client;
    }

    private ZooKeeperLeaseBackend backend(CuratorFramework client) {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT);
        closeables.add(backend);
        return backend;
    }

    private LeaseEngine engine(LeaseBackend<?> backend) {
        LeaseEngine engine = ZooKeeperTesting.engine(backend);
        closeables.add(engine);
        return engine;
    }

    private static GrantRequest request(String name) {
        return new GrantRequest(name, SESSION_TIMEOUT, reason -> { });
    }
}
