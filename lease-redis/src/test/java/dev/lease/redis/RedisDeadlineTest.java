package dev.lease.redis;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

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
            assertThat(backend.boundsCallsByDeadline()).as("before the shared connection is open").isFalse();
            backend.release(backend.tryAcquire(request("warm", seconds(5))).orElseThrow());
            assertThat(backend.boundsCallsByDeadline()).as("once the shared connection is open").isTrue();

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
            CompletableFuture<Void> abandoned = CompletableFuture.runAsync(() -> backend.abandon(frozen));
            proxy.unfreeze();
            abandoned.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(redis.admin().hasKey(backend.key("frozen"))).as("the late SET was abandoned").isFalse();
            assertThat(backend.tryAcquire(request("frozen", seconds(5)))).isPresent();
        }
    }

    @Test
    void aWaitEndsAtItsMaxWaitWhileRedisIsFrozen() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.port());
                RedisLeaseBackend backend = new RedisLeaseBackend(redis.connectionFactory(proxy.port(), CLIENT_TIMEOUT),
                        "deadline-wait:")) {
            backend.tryAcquire(request("busy", seconds(30))).orElseThrow();
            proxy.freeze();
            CompletableFuture<Void> wait = CompletableFuture.runAsync(() -> {
                try {
                    backend.awaitRelease("busy", millis(200));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            // Well before the client's minute: only maxWait can have ended the wait.
            assertThat(wait).succeedsWithin(seconds(20));
            proxy.unfreeze();
        }
    }

    @Test
    void aFactoryWithoutASharedConnectionIsCalledOnAHelperThread() throws Exception {
        LettuceConnectionFactory pooled = redis.connectionFactory(redis.port(), CLIENT_TIMEOUT);
        pooled.setShareNativeConnection(false);
        try (RedisLeaseBackend backend = new RedisLeaseBackend(pooled, "deadline-pooled:")) {
            backend.release(backend.tryAcquire(request("pooled", seconds(5))).orElseThrow());
            // A dedicated connection goes back to its pool with a request in flight: an abandon sent on another one
            // could overtake it, so such calls stay blocking and the engine bounds them from a helper thread.
            assertThat(backend.boundsCallsByDeadline()).isFalse();
        }
    }

    private static GrantRequest request(String name, Duration wait) {
        return new GrantRequest(name, seconds(10), reason -> { }, UUID.randomUUID().toString(),
                System.nanoTime() + wait.toNanos());
    }
}
