package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.RedisCallback;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.LeaseConfigurationException;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.BlockingWork;

/** Redis-specific behaviour on a real redis-server: takeover by another owner, refusal of CORRECTNESS, names. */
class RedisLeaseBackendTest {

    private static final Log log = LogFactory.getLog(RedisLeaseBackendTest.class);
    private static final String PREFIX = "behaviour:";

    private static EmbeddedRedis redis;
    private static RedisLeaseBackend backend;
    private static RedisLeaseBackend second;
    private static StringRedisTemplate admin;

    private LeaseEngine engine;
    private String name;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        backend = new RedisLeaseBackend(redis.connectionFactory(), PREFIX);
        second = new RedisLeaseBackend(redis.connectionFactory(), PREFIX);
        admin = redis.admin();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        backend.close();
        second.close();
        redis.close();
    }

    @BeforeEach
    void startEngine(TestInfo info) {
        engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY, backend)), LeaseDefaults.standard());
        name = info.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    }

    @AfterEach
    void stopEngine() {
        engine.close();
        pool.shutdownNow();
    }

    @Test
    void aKeyOverwrittenByAnotherOwnerInterruptsTheHolderAndStaysTheirs() throws Exception {
        // A long ttl: only a failed renewal, not local expiry, can end the lease within the bound below.
        LeaseSpec spec = LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(seconds(60)).withRenewEvery(seconds(1))
                .withWaitFor(seconds(10));
        BlockingWork work = new BlockingWork();
        Future<String> call = pool.submit(() -> engine.execute(spec, work));
        assertThat(work.awaitStarted(seconds(30))).isTrue();
        long intruderTtl = Duration.ofMinutes(10).toMillis();
        long before = System.nanoTime();
        admin.opsForValue().set(backend.key(name), "intruder", Duration.ofMillis(intruderTtl));

        assertThatThrownBy(() -> call.get(seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                .hasMessageContaining(name).hasMessageContaining("no longer holds this grant")
                .hasCauseInstanceOf(InterruptedException.class);
        long elapsed = Duration.ofNanos(System.nanoTime() - before).toMillis();
        log.info("Overwritten key noticed and holder interrupted after " + elapsed + " ms");

        // Neither the failed renewal nor the release after the loss touched the other owner's key.
        assertThat(admin.opsForValue().get(backend.key(name))).isEqualTo("intruder");
        Long pttl = admin.execute((RedisCallback<Long>) c -> c.keyCommands().pTtl(backend.key(name).getBytes(StandardCharsets.UTF_8)));
        assertThat(pttl).as("the other owner's ttl").isBetween(intruderTtl - elapsed - 1000, intruderTtl);
    }

    @Test
    void aDeletedKeyInterruptsTheHolderAtTheNextRenewal() throws Exception {
        LeaseSpec spec = LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(seconds(60)).withRenewEvery(seconds(1))
                .withWaitFor(seconds(10));
        BlockingWork work = new BlockingWork();
        Future<String> call = pool.submit(() -> engine.execute(spec, work));
        assertThat(work.awaitStarted(seconds(30))).isTrue();
        admin.delete(backend.key(name));
        assertThatThrownBy(() -> call.get(seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                .hasMessageContaining(name);
        assertThat(work.wasInterrupted()).isTrue();
    }

    @Test
    void correctnessRoutedToRedisIsRefused() {
        BackendRouter router = BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend));
        assertThatThrownBy(() -> router.backendFor(LeaseKind.CORRECTNESS))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("CORRECTNESS leases routed to redis")
                .hasMessageContaining("Redis issues no fencing token")
                .hasMessageContaining("wall-clock")
                .hasMessageContaining("asynchronous")
                .hasMessageContaining("lease.correctness-backend: zookeeper")
                .hasMessageContaining("jdbc");
    }

    @Test
    void correctnessRoutedToRedisThrowsAtCallTimeWithoutTouchingRedis() {
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> engine.execute(LeaseSpec.of(name, LeaseKind.CORRECTNESS), lease -> {
            ran.set(true);
            return null;
        })).isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining(name)
                .hasMessageContaining("Redis issues no fencing token")
                .hasMessageContaining("lease.correctness-backend: zookeeper");
        assertThat(ran).as("work ran").isFalse();
        assertThat(admin.hasKey(backend.key(name))).as("key written").isFalse();
        assertThatThrownBy(() -> engine.tryAcquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS)))
                .isInstanceOf(LeaseConfigurationException.class);
    }

    @Test
    void aRedisLeaseHasNoTokenAndSaysWhy() {
        try (Lease lease = engine.acquire(LeaseSpec.of(name, LeaseKind.EFFICIENCY))) {
            assertThat(lease.hasToken()).isFalse();
            assertThat(admin.opsForValue().get(backend.key(name))).as("owner id in the key").isNotBlank();
            assertThatThrownBy(lease::token).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(name)
                    .hasMessageContaining("Redis issues no fencing token")
                    .hasMessageContaining("lease.correctness-backend: zookeeper or jdbc");
        }
        assertThat(admin.hasKey(backend.key(name))).as("key after release").isFalse();
    }

    @Test
    void malformedOrOversizedNamesAreRefusedBeforeReachingRedis() throws Exception {
        Long keysBefore = admin.execute((RedisCallback<Long>) c -> c.serverCommands().dbSize());
        for (String bad : List.of("x".repeat(201), "a/b", "..", "line\nbreak", " padded ", "")) {
            assertThatThrownBy(() -> engine.execute(LeaseSpec.of(bad, LeaseKind.EFFICIENCY), lease -> "ran"))
                    .as("engine with %s", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Invalid lease name");
            assertThatThrownBy(() -> backend.tryAcquire(new GrantRequest(bad, seconds(10), reason -> { })))
                    .as("backend with %s", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Invalid lease name");
        }
        assertThatThrownBy(() -> engine.execute(LeaseSpec.of("x".repeat(201), LeaseKind.EFFICIENCY), lease -> "ran"))
                .hasMessageContaining("at most 200");
        assertThat(admin.execute((RedisCallback<Long>) c -> c.serverCommands().dbSize())).isEqualTo(keysBefore);
        // The longest legal name still works.
        String ran = engine.execute(LeaseSpec.of("y".repeat(200), LeaseKind.EFFICIENCY), lease -> "ran");
        assertThat(ran).isEqualTo("ran");
    }

    @Test
    void theKeyPrefixIsValidated() {
        var factory = redis.connectionFactory();
        for (String bad : new String[] {null, "", "has space:", "lease*:", "tab\t", "x".repeat(65), "back\\slash"}) {
            assertThatThrownBy(() -> new RedisLeaseBackend(factory, bad)).as("prefix %s", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease.redis.key-prefix");
        }
        try (RedisLeaseBackend tagged = new RedisLeaseBackend(factory, "{app}:lease:")) {
            assertThat(tagged.key("a")).isEqualTo("{app}:lease:a");
            assertThat(tagged.releaseChannel()).isEqualTo("{app}:lease:released");
        }
    }

    @Test
    void aWaiterIsWokenByTheReleaseNotTheTimeout() throws Exception {
        var held = backend.tryAcquire(new GrantRequest(name, Duration.ofMinutes(10), reason -> { })).orElseThrow();
        // Open the waiting side's subscription first, so that the release below cannot be published before it.
        second.awaitRelease(name + "-warm-up", Duration.ofMillis(1));
        await().atMost(seconds(10)).until(() -> subscribers(second.releaseChannel()) >= 1);

        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<Long> waited = pool.submit(() -> {
            waiter.set(Thread.currentThread());
            long start = System.nanoTime();
            second.awaitRelease(name, Duration.ofMinutes(10));
            return Duration.ofNanos(System.nanoTime() - start).toMillis();
        });
        // Release only once the waiter sleeps on its latch: past its own check of the key, only a notification
        // (or the ten-minute timeout) can wake it.
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> waiter.get() != null
                && Arrays.stream(waiter.get().getStackTrace()).anyMatch(f -> f.getClassName().equals(CountDownLatch.class.getName())));
        backend.release(held);
        long millis = waited.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        log.info("Waiter woken " + millis + " ms after it began waiting (maxWait and key ttl were 10 minutes)");
        assertThat(second.tryAcquire(new GrantRequest(name, seconds(10), reason -> { }))).isPresent();
    }

    @Test
    void anEngineWaitingForABusyLeaseGetsItAfterRelease() throws Exception {
        Lease held = engine.acquire(LeaseSpec.of(name, LeaseKind.EFFICIENCY).withTtl(seconds(60)));
        LeaseEngine other = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, second, LeaseKind.EFFICIENCY, second)),
                LeaseDefaults.standard());
        try {
            Future<String> waiting = pool.submit(() -> other.execute(
                    LeaseSpec.of(name, LeaseKind.EFFICIENCY).withWaitFor(seconds(60)), lease -> "got it"));
            held.close();
            assertThat(waiting.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("got it");
        }
        finally {
            other.close();
        }
    }

    @Test
    void concurrentRenewalsEachGetTheirOwnAnswer() throws Exception {
        int leases = 24;
        List<RedisGrant> grants = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            grants.add(backend.tryAcquire(new GrantRequest(name + "-" + i, seconds(30), reason -> { })).orElseThrow());
        }
        // Every third lease is taken over by another owner: its renewal must fail and leave that owner's key alone.
        for (int i = 0; i < leases; i += 3) {
            admin.opsForValue().set(backend.key(name + "-" + i), "intruder", Duration.ofMinutes(10));
        }
        long scriptsBefore = scriptCalls();
        CyclicBarrier start = new CyclicBarrier(leases);
        List<Future<Boolean>> answers = new ArrayList<>();
        for (RedisGrant grant : grants) {
            answers.add(pool.submit(() -> {
                start.await();
                return backend.renew(grant);
            }));
        }
        for (int i = 0; i < leases; i++) {
            assertThat(answers.get(i).get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("renewal %d", i)
                    .isEqualTo(i % 3 != 0);
        }
        log.info(leases + " concurrent renewals took " + (scriptCalls() - scriptsBefore) + " script calls");
        for (int i = 0; i < leases; i += 3) {
            assertThat(admin.opsForValue().get(backend.key(name + "-" + i))).isEqualTo("intruder");
            assertThat(admin.getExpire(backend.key(name + "-" + i), TimeUnit.SECONDS)).isGreaterThan(60);
        }
        for (RedisGrant grant : grants) {
            backend.release(grant);
        }
    }

    /** The engine's batches: one script call renews all of them and names exactly the grant whose key was deleted. */
    @Test
    void aBatchOfManyGrantsIsRenewedInOneScriptCallThatNamesTheDeletedKey() throws Exception {
        int leases = 300;
        List<RedisGrant> grants = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            grants.add(backend.tryAcquire(new GrantRequest(name + "-" + i, seconds(30), reason -> { })).orElseThrow());
        }
        RedisGrant deleted = grants.get(leases / 2);
        admin.delete(backend.key(deleted.name()));
        // Shortened by hand, so that the renewal shows in every key's remaining time.
        for (RedisGrant grant : grants) {
            admin.expire(grant.key(), Duration.ofSeconds(5));
        }
        long scriptsBefore = scriptCalls();

        Set<RedisGrant> lost = backend.renewAll(grants);

        assertThat(scriptCalls() - scriptsBefore).as("script calls for %d grants", leases).isEqualTo(1);
        assertThat(lost).containsExactly(deleted);
        for (RedisGrant grant : grants) {
            if (grant != deleted) {
                assertThat(admin.getExpire(grant.key(), TimeUnit.SECONDS)).as("ttl of %s", grant.name()).isGreaterThan(20);
            }
        }
        assertThat(admin.hasKey(backend.key(deleted.name()))).as("the deleted key stays deleted").isFalse();
        for (RedisGrant grant : grants) {
            backend.release(grant);
        }
    }

    /** Held through the engine, many leases with the same timing share their renewal script calls. */
    @Test
    void manyLeasesHeldThroughTheEngineShareTheirRenewalScriptCalls() throws Exception {
        int count = 200;
        Duration renewEvery = Duration.ofMillis(400);
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            leases.add(engine.acquire(LeaseSpec.of(name + "-" + i, LeaseKind.EFFICIENCY).withTtl(seconds(4))
                    .withRenewEvery(renewEvery)));
        }
        long scriptsBefore = scriptCalls();
        long start = System.nanoTime();
        // Every key renewed at least three times: its remaining time was pushed back up each time.
        await().atMost(seconds(30)).until(() -> scriptCalls() - scriptsBefore >= 3
                && System.nanoTime() - start >= 3 * renewEvery.toNanos());
        double intervals = (System.nanoTime() - start) / (double) renewEvery.toNanos();
        long calls = scriptCalls() - scriptsBefore;
        log.info(count + " Redis leases over " + String.format("%.1f", intervals) + " renewal intervals: " + calls
                + " script calls");
        assertThat(calls / (count * intervals)).as("script calls per lease per interval").isLessThanOrEqualTo(0.05);
        assertThat(leases).as("still valid").allMatch(Lease::isValid);
        for (Lease lease : leases) {
            assertThat(admin.getExpire(backend.key(lease.name()), TimeUnit.MILLISECONDS)).as("pttl of %s", lease.name())
                    .isGreaterThan(seconds(4).minus(renewEvery.multipliedBy(3)).toMillis());
            lease.close();
        }
    }

    @Test
    void abandoningARequestWhoseAnswerWasLostFreesTheNameForAnotherInstance() throws Exception {
        // What the engine sees as a failed request (timeout, interrupt) may still have set the key: the same request,
        // abandoned, must remove it, or the name stays blocked for everyone until the ttl runs out.
        GrantRequest request = new GrantRequest(name, Duration.ofMinutes(10), reason -> { });
        assertThat(backend.tryAcquire(request)).isPresent();
        assertThat(second.tryAcquire(new GrantRequest(name, seconds(10), reason -> { }))).as("busy before").isEmpty();

        backend.abandon(request);

        assertThat(second.tryAcquire(new GrantRequest(name, seconds(10), reason -> { }))).as("free after").isPresent();
    }

    @Test
    void abandoningARequestThatGotNoGrantLeavesTheHoldersKeyAlone() throws Exception {
        var holder = second.tryAcquire(new GrantRequest(name, Duration.ofMinutes(10), reason -> { })).orElseThrow();
        GrantRequest refused = new GrantRequest(name, seconds(10), reason -> { });
        assertThat(backend.tryAcquire(refused)).isEmpty();

        backend.abandon(refused);

        assertThat(second.renew(holder)).as("the holder's grant survives").isTrue();
        assertThat(backend.tryAcquire(new GrantRequest(name, seconds(10), reason -> { }))).as("still busy").isEmpty();
        second.release(holder);
    }

    private static long subscribers(String channel) {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + redis.port());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().pubsubNumsub(channel).getOrDefault(channel, 0L);
        }
        finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static long scriptCalls() {
        Properties stats = admin.execute((RedisCallback<Properties>) c -> c.serverCommands().info("commandstats"));
        long calls = 0;
        for (String command : new String[] {"cmdstat_evalsha", "cmdstat_eval"}) {
            String line = stats.getProperty(command);
            if (line != null) {
                calls += Long.parseLong(line.replaceAll("^calls=(\\d+),.*$", "$1"));
            }
        }
        return calls;
    }
}
