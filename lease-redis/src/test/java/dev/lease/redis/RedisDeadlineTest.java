package dev.lease.redis;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.TcpProxy;

/**
 * On a Lettuce factory sharing its connection, grant requests and waits end at their deadline even when Redis does
 * not answer, so the engine calls them on the caller's thread; the client's command timeout here is a minute, far
 * past every wait below, so only the deadline can end them.
 */
class RedisDeadlineTest {

    private static final Duration CLIENT_TIMEOUT = Duration.ofMinutes(1);

    private static EmbeddedRedis redis;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    @Test
    void aGrantRequestEndsAtItsDeadlineWhileRedisIsFrozenAndItsAbandonFreesTheName() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend backend = new RedisLeaseBackend(redis.connectionFactory(proxy.port(), CLIENT_TIMEOUT),
                        "deadline:")) {
            assertThat(backend.traits().boundsCallsByDeadline()).as("before the shared connection is open").isFalse();
            backend.release(backend.tryAcquire(request("warm", seconds(5))).orElseThrow());
            assertThat(backend.traits().boundsCallsByDeadline()).as("once the shared connection is open").isTrue();

            proxy.freeze();
            GrantRequest frozen = request("frozen", millis(200));
            CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return backend.tryAcquire(frozen);
                }
                catch (Exception ex) {
                    return ex;
                }
            });
            // Well before the client's minute: only the deadline can have ended the call.
            assertThat(call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class)
                    .asString().contains("lease 'frozen'");

            // The SET is still held by the proxy and reaches Redis on thawing; the abandon, sent after it on the same
            // connection, reaches Redis after it and removes it.
            CompletableFuture<Void> abandoned = CompletableFuture.runAsync(() -> {
                try {
                    backend.abandon(frozen);
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            });
            proxy.unfreeze();
            abandoned.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(redis.admin().hasKey(backend.key("frozen"))).as("the late SET was abandoned").isFalse();
            assertThat(backend.tryAcquire(request("frozen", seconds(5)))).isPresent();
        }
    }

    @Test
    void aWaitEndsByItsMaxWaitWhileRedisIsFrozen() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend backend = new RedisLeaseBackend(redis.connectionFactory(proxy.port(), CLIENT_TIMEOUT),
                        "deadline-wait:")) {
            backend.tryAcquire(request("busy", seconds(30))).orElseThrow();
            proxy.freeze();
            Duration maxWait = seconds(2);
            long begin = System.nanoTime();
            backend.awaitRelease("busy", maxWait);
            Duration waited = Duration.ofNanos(System.nanoTime() - begin);
            proxy.unfreeze();
            // The unanswered PTTL takes all of maxWait: the wait for the release signal must not add another.
            assertThat(waited).isLessThan(maxWait.multipliedBy(3).dividedBy(2));
        }
    }

    /**
     * Through the engine, which calls this backend on the caller's thread: the caller gets its answer at its deadline,
     * and the grant the frozen request makes once the link thaws is abandoned at once, not left for its ttl.
     */
    @Test
    void theEngineAbandonsAGrantThatCameAfterItsCallerGaveUp() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend backend = new RedisLeaseBackend(redis.connectionFactory(proxy.port(), CLIENT_TIMEOUT),
                        "deadline-engine:");
                LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, backend)),
                        LeaseDefaults.standard())) {
            LeaseSpec spec = LeaseSpec.of("late", LeaseKind.EFFICIENCY).withTtl(Duration.ofMinutes(1))
                    .withWaitFor(millis(300));
            engine.acquire(spec).close();
            assertThat(backend.traits().boundsCallsByDeadline()).isTrue();

            proxy.freeze();
            CompletableFuture<Lease> frozen = CompletableFuture.supplyAsync(() -> engine.acquire(spec));
            assertThat(frozen).failsWithin(seconds(20)).withThrowableThat()
                    .havingCause().isInstanceOf(LeaseUnavailableException.class);
            proxy.unfreeze();
            await().atMost(seconds(20)).until(() -> !redis.admin().hasKey(backend.key("late")));
        }
    }

    @Test
    void factoriesThatCannotKeepARequestAndItsAbandonInOrderAreNotBounded() throws Exception {
        LettuceConnectionFactory pooled = redis.connectionFactory(redis.port(), CLIENT_TIMEOUT);
        pooled.setShareNativeConnection(false);
        LettuceConnectionFactory validating = redis.connectionFactory(redis.port(), CLIENT_TIMEOUT);
        validating.setValidateConnection(true);
        for (LettuceConnectionFactory factory : List.of(pooled, validating)) {
            try (RedisLeaseBackend backend = new RedisLeaseBackend(factory, "deadline-unbounded:")) {
                backend.release(backend.tryAcquire(request("unbounded", seconds(5))).orElseThrow());
                assertThat(backend.traits().boundsCallsByDeadline()).as("shared %s, validating %s",
                        factory.getShareNativeConnection(), factory.getValidateConnection()).isFalse();
            }
        }
        LettuceConnectionFactory cluster = new LettuceConnectionFactory(new RedisClusterConfiguration(
                List.of("127.0.0.1:" + redis.port())));
        try (RedisLeaseBackend backend = new RedisLeaseBackend(cluster, "deadline-cluster:")) {
            assertThat(backend.traits().boundsCallsByDeadline()).as("cluster").isFalse();
        }
    }

    /**
     * The engine asks for the traits on the caller's thread before every grant request, so they never take a
     * connection: a sharing Lettuce factory is known not to be a cluster from the start, any other factory once its
     * first grant request took a connection anyway (the engine asks whether to batch renewals after the first grant).
     */
    @Test
    void tellsWhetherItRenewsInOneCallWithoutTakingAConnection() throws Exception {
        LettuceConnectionFactory pooled = redis.connectionFactory(redis.port(), CLIENT_TIMEOUT);
        pooled.setShareNativeConnection(false);
        try (RedisLeaseBackend shared = new RedisLeaseBackend(redis.connectionFactory(redis.port(), CLIENT_TIMEOUT),
                "traits-shared:");
                RedisLeaseBackend other = new RedisLeaseBackend(pooled, "traits-pooled:")) {
            assertThat(shared.traits().renewsInOneCall()).as("sharing Lettuce factory, before any call").isTrue();
            assertThat(shared.traits().boundsCallsByDeadline()).as("its connection still unopened").isFalse();
            assertThat(other.traits().renewsInOneCall()).as("pooled factory, before any call").isFalse();
            other.release(other.tryAcquire(request("pooled", seconds(5))).orElseThrow());
            assertThat(other.traits().renewsInOneCall()).as("pooled factory, after its first grant request").isTrue();
        }
        LettuceConnectionFactory cluster = new LettuceConnectionFactory(new RedisClusterConfiguration(
                List.of("127.0.0.1:" + redis.port())));
        try (RedisLeaseBackend backend = new RedisLeaseBackend(cluster, "traits-cluster:")) {
            assertThat(backend.traits().renewsInOneCall()).as("cluster-aware factory, no cluster to ask").isFalse();
        }
    }

    private static GrantRequest request(String name, Duration wait) {
        return new GrantRequest(name, seconds(10), reason -> { }, UUID.randomUUID().toString(),
                System.nanoTime() + wait.toNanos());
    }
}
