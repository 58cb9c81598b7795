package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.LeaseBackend;

/**
 * A three-node ensemble loses its leader while a lease is held and another process keeps trying to take it: the
 * holder either keeps the lease or is cancelled, and the two are never both valid at once.
 */
class ZooKeeperClusterFailoverTest {

    private static final Log log = LogFactory.getLog(ZooKeeperClusterFailoverTest.class);
    private static final Duration SESSION_TIMEOUT = seconds(8);
    private static final Duration TTL = seconds(6);

    @Test
    void losingTheLeaderNeverLeavesTwoHolders() throws Exception {
        List<InstanceSpec> specs = IntStream.rangeClosed(1, 3).mapToObj(ZooKeeperTesting::spec).toList();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            try (CuratorFramework clientA = ZooKeeperTesting.client(cluster.getConnectString(), SESSION_TIMEOUT);
                    CuratorFramework clientB = ZooKeeperTesting.client(cluster.getConnectString(), SESSION_TIMEOUT);
                    ZooKeeperLeaseBackend backendA = new ZooKeeperLeaseBackend(clientA, "/cluster-leases", SESSION_TIMEOUT);
                    ZooKeeperLeaseBackend backendB = new ZooKeeperLeaseBackend(clientB, "/cluster-leases", SESSION_TIMEOUT);
                    LeaseEngine engineA = engine(backendA);
                    LeaseEngine engineB = engine(backendB)) {
                run(cluster, pool, engineA, engineB);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }

    private void run(TestingCluster cluster, ExecutorService pool, LeaseEngine engineA, LeaseEngine engineB)
            throws Exception {
        String name = "failover";
        LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(TTL);
        AtomicReference<Lease> leaseA = new AtomicReference<>();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Future<Object> holderA = pool.submit(() -> engineA.execute(spec, lease -> {
            leaseA.set(lease);
            holding.countDown();
            done.await();
            return "kept";
        }));
        assertThat(holding.await(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        AtomicReference<Lease> leaseB = new AtomicReference<>();
        AtomicReference<String> overlap = new AtomicReference<>();
        Future<?> contenderB = pool.submit(() -> {
            long until = System.nanoTime() + seconds(20).toNanos();
            while (System.nanoTime() - until < 0 && !Thread.currentThread().isInterrupted()) {
                if (leaseB.get() == null) {
                    try {
                        Optional<Lease> got = engineB.tryAcquire(spec);
                        if (got.isPresent()) {
                            leaseB.set(got.get());
                            log.info("Second process acquired '" + name + "' with token " + got.get().token().value());
                        }
                    }
                    catch (RuntimeException unavailable) {
                        // No quorum yet: keep trying.
                    }
                }
                Lease a = leaseA.get();
                Lease b = leaseB.get();
                if (a != null && b != null && a.isValid() && b.isValid()) {
                    overlap.compareAndSet(null, a + " and " + b);
                }
                if (b != null && holderA.isDone()) {
                    return null;
                }
                Thread.sleep(10);
            }
            return null;
        });

        String leader = leaderOf(cluster);
        InstanceSpec leaderSpec = cluster.getInstances().stream().filter(s -> s.getConnectString().equals(leader))
                .findFirst().orElseThrow();
        log.info("Killing the ZooKeeper leader " + leader);
        cluster.killServer(leaderSpec);

        // Give the failover time to happen, then let a holder that kept its lease finish normally.
        boolean aEnded = awaitDone(holderA, seconds(10));
        done.countDown();
        contenderB.get(seconds(40).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(overlap.get()).as("two valid holders at once").isNull();
        String outcome;
        try {
            outcome = (String) holderA.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException ex) {
            assertThat(ex.getCause()).isInstanceOf(LeaseLostException.class);
            outcome = "cancelled: " + ex.getCause().getMessage();
        }
        log.info("Holder after the leader failover: " + outcome + (aEnded ? " (during the failover)" : ""));
        Lease b = leaseB.get();
        if (b != null) {
            assertThat(b.token().value()).as("second holder's token").isGreaterThan(leaseA.get().token().value());
            b.close();
        }
        else {
            assertThat(outcome).as("nobody else got the lease, so the holder kept it").isEqualTo("kept");
        }
    }

    private static boolean awaitDone(Future<?> future, Duration max) throws InterruptedException {
        try {
            future.get(max.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException ex) {
            return true;
        }
        catch (TimeoutException ex) {
            return false;
        }
        return true;
    }

    private static String leaderOf(TestingCluster cluster) throws Exception {
        for (InstanceSpec spec : cluster.getInstances()) {
            if (ZooKeeperTesting.fourLetterWord(spec.getPort(), "srvr").contains("Mode: leader")) {
                return spec.getConnectString();
            }
        }
        throw new AssertionError("no leader in " + cluster.getConnectString());
    }

    private static LeaseEngine engine(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
