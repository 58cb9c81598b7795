package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.LeaseBackend;

/**
 * Local handover on a real ZooKeeper server, with two engines on two sessions (two processes, as far as the store
 * can tell), several threads in each waiting for one fenced name: exclusion holds across both engines, every holder
 * gets a token of its own strictly above the previous holder's, and both engines make progress.
 */
class ZooKeeperLocalHandoverTest {

    private static final Duration SESSION_TIMEOUT = seconds(6);

    private static TestingServer server;
    private static CuratorFramework firstClient;
    private static CuratorFramework secondClient;
    private static ZooKeeperLeaseBackend first;
    private static ZooKeeperLeaseBackend second;

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        firstClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        secondClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        first = new ZooKeeperLeaseBackend(firstClient, "/handover-leases", SESSION_TIMEOUT);
        second = new ZooKeeperLeaseBackend(secondClient, "/handover-leases", SESSION_TIMEOUT);
    }

    @AfterAll
    static void stop() throws Exception {
        first.close();
        second.close();
        firstClient.close();
        secondClient.close();
        server.close();
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    private static LeaseEngine engine(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    @Test
    void twoEnginesWithSeveralWaitersEachKeepExclusionAndRisingTokensAndBothMakeProgress() throws Exception {
        int threadsPerEngine = 3;
        int rounds = 10;
        LeaseSpec spec = LeaseSpec.of("contended", LeaseKind.CORRECTNESS).withTtl(SESSION_TIMEOUT)
                .withWaitFor(seconds(120));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong(Long.MIN_VALUE);
        AtomicInteger tokenRegressions = new AtomicInteger();
        List<Integer> order = new CopyOnWriteArrayList<>();
        try (LeaseEngine one = engine(first); LeaseEngine two = engine(second)) {
            LeaseEngine[] engines = { one, two };
            CyclicBarrier start = new CyclicBarrier(2 * threadsPerEngine);
            List<Future<?>> threads = new ArrayList<>();
            for (int e = 0; e < 2; e++) {
                LeaseEngine engine = engines[e];
                int which = e;
                for (int t = 0; t < threadsPerEngine; t++) {
                    threads.add(pool.submit(() -> {
                        start.await();
                        for (int r = 0; r < rounds; r++) {
                            engine.execute(spec, lease -> {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                long token = lease.token().value();
                                if (token <= lastToken.get()) {
                                    tokenRegressions.incrementAndGet();
                                }
                                lastToken.set(token);
                                order.add(which);
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                                inside.decrementAndGet();
                                return null;
                            });
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> thread : threads) {
                thread.get(seconds(180).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        assertThat(overlaps).as("sections that overlapped another").hasValue(0);
        assertThat(tokenRegressions).as("tokens not above the previous holder's").hasValue(0);
        assertThat(order).hasSize(2 * threadsPerEngine * rounds);
        assertThat(order.stream().filter(which -> which == 0).count()).isEqualTo(threadsPerEngine * rounds);
        // Neither engine kept the name until its threads were done while the other one's waited.
        assertThat(order.indexOf(1)).as("first section of the second engine").isLessThan(order.lastIndexOf(0));
        assertThat(order.indexOf(0)).as("first section of the first engine").isLessThan(order.lastIndexOf(1));
    }
}
