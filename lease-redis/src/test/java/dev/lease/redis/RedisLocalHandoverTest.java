package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.testing.EmbeddedRedis;

/**
 * Local handover on a real redis-server, with two engines over two backends (two processes, as far as the store can
 * tell), several threads in each waiting for one name: each engine queues its own waiters behind one that asks the
 * store, and the store still decides between the engines. Exclusion holds across both, and both make progress.
 */
class RedisLocalHandoverTest {

    private static final Log log = LogFactory.getLog(RedisLocalHandoverTest.class);

    private static EmbeddedRedis redis;
    private static RedisLeaseBackend first;
    private static RedisLeaseBackend second;

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        first = new RedisLeaseBackend(redis.connectionFactory(), "handover:");
        second = new RedisLeaseBackend(redis.connectionFactory(), "handover:");
    }

    @AfterAll
    static void stopRedis() throws Exception {
        first.close();
        second.close();
        redis.close();
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    private static LeaseEngine engineOver(RedisLeaseBackend backend) {
        return new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY, backend)),
                LeaseDefaults.standard());
    }

    @Test
    void twoEnginesWithSeveralWaitersEachKeepExclusionAndBothMakeProgress() throws Exception {
        int threadsPerEngine = 4;
        int rounds = 15;
        LeaseSpec spec = LeaseSpec.of("contended-" + System.nanoTime(), LeaseKind.EFFICIENCY)
                .withTtl(seconds(30)).withWaitFor(seconds(120));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger[] sections = { new AtomicInteger(), new AtomicInteger() };
        List<Integer> order = new CopyOnWriteArrayList<>();
        try (LeaseEngine one = engineOver(first); LeaseEngine two = engineOver(second)) {
            LeaseEngine[] engines = { one, two };
            CyclicBarrier start = new CyclicBarrier(2 * threadsPerEngine);
            List<Future<?>> threads = new ArrayList<>();
            for (int e = 0; e < 2; e++) {
                LeaseEngine engine = engines[e];
                int which = e;
                AtomicInteger done = sections[e];
                for (int t = 0; t < threadsPerEngine; t++) {
                    threads.add(pool.submit(() -> {
                        start.await();
                        for (int r = 0; r < rounds; r++) {
                            engine.execute(spec, lease -> {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                order.add(which);
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                                inside.decrementAndGet();
                                return done.incrementAndGet();
                            });
                        }
                        return null;
                    }));
                }
            }
            long begin = System.nanoTime();
            for (Future<?> thread : threads) {
                thread.get(seconds(180).toMillis(), TimeUnit.MILLISECONDS);
            }
            long switches = IntStream.range(1, order.size())
                    .filter(i -> !order.get(i).equals(order.get(i - 1))).count();
            log.info(order.size() + " sections in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)
                    + " ms; the name went from one engine to the other " + switches + " times");
        }
        assertThat(overlaps).as("sections that overlapped another").hasValue(0);
        assertThat(sections[0]).hasValue(threadsPerEngine * rounds);
        assertThat(sections[1]).hasValue(threadsPerEngine * rounds);
        // Neither engine kept the name until its threads were done while the other one's waited.
        assertThat(order.indexOf(1)).as("first section of the second engine").isLessThan(order.lastIndexOf(0));
        assertThat(order.indexOf(0)).as("first section of the first engine").isLessThan(order.lastIndexOf(1));
    }
}
