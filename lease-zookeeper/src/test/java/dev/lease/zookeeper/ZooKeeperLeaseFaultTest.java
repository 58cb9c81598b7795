package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
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
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
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
            Grant grant = backend.tryAcquire(request(name)).orElseThrow();
            assertThat(grant.token().getAsLong()).isGreaterThan(before);
            before = grant.token().getAsLong();
            backend.release(grant);
        }

        server.restart();

        AtomicReference<Grant> after = new AtomicReference<>();
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> backend.tryAcquire(request(name)).map(g -> { after.set(g); return g; }).isPresent());
        assertThat(after.get().token().getAsLong()).as("token after restart, same client").isGreaterThan(before);
        backend.release(after.get());

        ZooKeeperLeaseBackend newcomer = backend(client(server.getConnectString()));
        Grant fresh = newcomer.tryAcquire(request(name)).orElseThrow();
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
                LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT), work));
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
        Grant stale = cutOff.tryAcquire(new GrantRequest(name, SESSION_TIMEOUT, why -> {
            reason.compareAndSet(null, why);
            toldLostAt.compareAndSet(0, System.nanoTime());
        })).orElseThrow();
        long expiredSession = cutOffClient.getZookeeperClient().getZooKeeper().getSessionId();

        long frozenAt = System.nanoTime();
        proxy.freeze();

        AtomicReference<Grant> successor = new AtomicReference<>();
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

    private LeaseEngine engine(LeaseBackend backend) {
        Map<LeaseKind, LeaseBackend> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        closeables.add(engine);
        return engine;
    }

    private static GrantRequest request(String name) {
        return new GrantRequest(name, SESSION_TIMEOUT, reason -> { });
    }
}
