package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.testing.BlockingWork;

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
        engine = new LeaseEngine(BackendRouter.select(List.of(backend), "redis", null, null), LeaseDefaults.standard());
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
    void aStoppedRedisInterruptsTheHolderAndARestartedOneGrantsAgain() throws Exception {
        // The ttl is long compared to the renewal interval: the loss must come from the failed renewal.
        LeaseSpec spec = LeaseSpec.of("fault-stop", LeaseKind.EFFICIENCY).withTtl(seconds(60)).withRenewEvery(seconds(1));
        BlockingWork work = new BlockingWork();
        Future<String> call = pool.submit(() -> engine.execute(spec, work));
        assertThat(work.awaitStarted(seconds(10))).isTrue();
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
