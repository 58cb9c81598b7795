package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/** Stopping and restarting the redis-server under a held lease; on a server of its own. */
class RedisLeaseFaultTest {

    private static final Log log = LogFactory.getLog(RedisLeaseFaultTest.class);

    private static EmbeddedRedis redis;
    private static RedisLeaseBackend backend;
    private static LeaseEngine engine;
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        backend = new RedisLeaseBackend(redis.connectionFactory(), "fault:");
        engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY, backend)), LeaseDefaults.standard());
    }

    @AfterAll
    static void stopRedis() throws Exception {
        engine.close();
        backend.close();
        redis.close();
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    @Test
    void closingTheLeaderOfAnInFlightRenewalBatchLosesNoOtherLeaseOfTheBatch() throws Exception {
        Duration ttl = seconds(4);
        Duration renewEvery = seconds(1);
        ExecutorService holders = Executors.newCachedThreadPool();
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend viaProxy = new RedisLeaseBackend(
                        redis.connectionFactory(proxy.port(), seconds(10)), "batch-close:");
                LeaseEngine batching = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, viaProxy, LeaseKind.EFFICIENCY, viaProxy)),
                        LeaseDefaults.standard())) {
            // Connect and load the scripts first: a slow first connection must not eat into the leases' validity.
            var warmUp = viaProxy.tryAcquire(new GrantRequest("warm-up", ttl, reason -> { })).orElseThrow();
            assertThat(viaProxy.renew(warmUp)).isTrue();
            viaProxy.release(warmUp);

            Map<String, Lease> leases = new ConcurrentHashMap<>();
            Map<String, BlockingWork> works = new ConcurrentHashMap<>();
            Map<String, Future<String>> calls = new ConcurrentHashMap<>();
            for (int i = 0; i < 4; i++) {
                String name = "batched-" + i;
                BlockingWork work = new BlockingWork();
                works.put(name, work);
                LeaseSpec spec = LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(ttl).withRenewEvery(renewEvery)
                        .withWaitFor(seconds(10));
                calls.put(name, holders.submit(() -> batching.execute(spec, lease -> {
                    leases.put(name, lease);
                    return work.doInLease(lease);
                })));
            }
            for (BlockingWork work : works.values()) {
                assertThat(work.awaitStarted(seconds(30))).isTrue();
            }
            // A slow link: renewals falling due while one request travels gather into the next batch.
            proxy.delay(TestTiming.millis(150));
            AtomicReference<List<String>> batch = new AtomicReference<>();
            await().atMost(seconds(20)).pollInterval(Duration.ofMillis(1)).until(() -> {
                batch.set(viaProxy.renewalsInFlight());
                return batch.get().size() >= 2;
            });
            // Frozen, the link holds the batch's answer: it stays in flight while its leader's lease is closed.
            proxy.freeze();
            assertThat(viaProxy.renewalsInFlight()).as("the batch is still in flight").isEqualTo(batch.get());
            String leader = batch.get().get(0);
            Lease closing = leases.get(leader);
            // The release waits for the frozen link, so it runs on a thread of its own; the renewal is cancelled
            // before the lease turns invalid.
            CompletableFuture<Void> closed = CompletableFuture.runAsync(closing::close, holders);
            await().atMost(seconds(10)).pollInterval(Duration.ofMillis(1)).until(() -> !closing.isValid());
            proxy.unfreeze();
            proxy.delay(Duration.ZERO);
            closed.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
            log.info("Closed lease " + leader + " while leading the in-flight renewal batch " + batch.get());

            // Longer than the ttl: only renewals that keep succeeding keep the others valid that long.
            List<String> others = leases.keySet().stream().filter(name -> !name.equals(leader)).sorted().toList();
            Callable<Boolean> othersHeld = () -> others.stream().allMatch(name -> leases.get(name).isValid()
                    && !works.get(name).wasInterrupted() && !calls.get(name).isDone());
            await().during(ttl.plus(renewEvery)).atMost(ttl.plus(renewEvery).plus(seconds(10)))
                    .pollInterval(Duration.ofMillis(20))
                    .failFast("another lease of the batch " + batch.get() + " was lost, its holder interrupted",
                            () -> !othersHeld.call())
                    .until(othersHeld);
        }
        finally {
            holders.shutdownNow();
        }
    }

    /**
     * A waiter whose link to Redis goes silent gives up at its waitFor plus a bound, naming the unreachable store,
     * instead of sitting out the client's command timeout (Spring's default is a minute; ten seconds here).
     */
    @Test
    void aWaiterCutOffByAFrozenNetworkGivesUpAtItsWaitForNamingTheUnreachableStore() throws Exception {
        LeaseSpec spec = LeaseSpec.of("fault-frozen-waiter", LeaseKind.EFFICIENCY).withTtl(seconds(30));
        Duration waitFor = Duration.ofMillis(1500);
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend viaProxy = new RedisLeaseBackend(
                        redis.connectionFactory(proxy.port(), seconds(10)), "fault:");
                LeaseEngine waiters = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, viaProxy, LeaseKind.EFFICIENCY, viaProxy)),
                        LeaseDefaults.standard());
                Lease held = engine.acquire(spec)) {
            try {
                long start = System.nanoTime();
                Future<Lease> waiter = pool.submit(() -> waiters.acquire(spec.withWaitFor(waitFor)));
                Thread.sleep(300); // waiting on the busy lease by now, over a live connection
                proxy.freeze();

                assertThatThrownBy(() -> waiter.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(dev.lease.LeaseUnavailableException.class)
                        .hasMessageContaining("'fault-frozen-waiter'")
                        .hasMessageContaining("redis store could not be reached")
                        .hasMessageNotContaining("held by someone else");
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                log.info("Frozen Redis link: waiter with waitFor " + waitFor.toMillis() + " ms gave up after "
                        + took.toMillis() + " ms");
                assertThat(took).as("waitFor plus a bound").isLessThanOrEqualTo(waitFor.plus(seconds(3)));
            }
            finally {
                proxy.unfreeze(); // lets the abandoned command end
            }
        }
    }

    @Test
    void aStoppedRedisInterruptsTheHolderAndARestartedOneGrantsAgain() throws Exception {
        // The ttl is long compared to the renewal interval: the loss must come from the failed renewal.
        LeaseSpec spec = LeaseSpec.of("fault-stop", LeaseKind.EFFICIENCY).withTtl(seconds(60))
                .withRenewEvery(seconds(1)).withWaitFor(seconds(10));
        BlockingWork work = new BlockingWork();
        Future<String> call = pool.submit(() -> engine.execute(spec, work));
        assertThat(work.awaitStarted(seconds(30))).isTrue();
        long before = System.nanoTime();
        redis.stop();

        assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("fault-stop").hasMessageContaining("renewal failed")
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(work.wasInterrupted()).as("holder interrupted").isTrue();
        log.info("Redis stopped: holder interrupted and LeaseLostException thrown after "
                + Duration.ofNanos(System.nanoTime() - before).toMillis() + " ms");

        // While Redis is down, acquiring reports the lease as unavailable rather than granting it.
        assertThatThrownBy(() -> engine.tryAcquire(LeaseSpec.of("fault-stop", LeaseKind.EFFICIENCY)))
                .isInstanceOf(dev.lease.LeaseUnavailableException.class);

        // A waiter whose subscription cannot be opened falls back to a plain bounded wait.
        try (RedisLeaseBackend fresh = new RedisLeaseBackend(redis.connectionFactory(), "fault:")) {
            long waitStart = System.nanoTime();
            fresh.awaitRelease("fault-stop", Duration.ofMillis(200));
            log.info("awaitRelease with Redis down returned after "
                    + Duration.ofNanos(System.nanoTime() - waitStart).toMillis() + " ms (maxWait 200 ms)");
        }

        redis.restart();
        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            Optional<Lease> lease = engine.tryAcquire(LeaseSpec.of("fault-stop", LeaseKind.EFFICIENCY));
            lease.ifPresent(Lease::close);
            return lease.isPresent();
        });
        try (Lease lease = engine.acquire(LeaseSpec.of("fault-after-restart", LeaseKind.EFFICIENCY)
                .withTtl(seconds(3)))) {
            assertThat(lease.isValid()).isTrue();
        }
    }
}
