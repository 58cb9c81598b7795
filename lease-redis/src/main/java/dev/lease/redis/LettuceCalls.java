package dev.lease.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

/**
 * The calls of the wait for a lease, sent on the shared native connection of a {@link LettuceConnectionFactory} and
 * awaited no longer than the caller's deadline. Lettuce's own command timeout (60 s unless configured) is far longer
 * than a caller usually waits, so without this the engine calls the backend on a helper thread, which costs two
 * thread hand-offs per grant: on a local Redis, as much as the round trip itself.
 *
 * <p>Only the shared connection will do: it carries every command of this backend in the order sent, so the
 * {@code abandon} of a request whose answer was not awaited reaches Redis after that request, whatever became of it.
 * A pooled, dedicated connection would go back to the pool with the request still in flight.
 */
final class LettuceCalls {

    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisFuture",
            LettuceCalls.class.getClassLoader());

    private final LettuceConnectionFactory factory;
    /** Set once the shared connection is open: opening it may block for Lettuce's connect timeout. */
    private volatile boolean opened;

    private LettuceCalls(LettuceConnectionFactory factory) {
        this.factory = factory;
    }

    /** The bounded calls for {@code factory}, or null when it is not a Lettuce factory sharing its connection. */
    static LettuceCalls of(RedisConnectionFactory factory) {
        if (LETTUCE_PRESENT && factory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection()) {
            return new LettuceCalls(lettuce);
        }
        return null;
    }

    /** Whether every call returns by its deadline: once the shared connection is open, Lettuce queues, never blocks. */
    boolean bounded() {
        return opened;
    }

    /**
     * {@code SET key owner NX PX ttl}, waiting no longer than {@code deadline}.
     *
     * @return whether the key was set
     * @throws TimeoutException when Redis did not answer by the deadline (the request may still be applied)
     */
    boolean setIfAbsent(String key, String owner, long ttlMillis, long deadline, String name) throws Exception {
        // Never longer than the client's command timeout either, as the blocking call would (a direct caller of the
        // backend may give no deadline at all).
        long wait = Math.min(Math.max(0, deadline - System.nanoTime()), TimeUnit.MILLISECONDS.toNanos(factory.getTimeout()));
        RedisFuture<String> set = commands().set(bytes(key), bytes(owner), SetArgs.Builder.nx().px(ttlMillis));
        try {
            return "OK".equals(set.get(wait, TimeUnit.NANOSECONDS));
        }
        catch (TimeoutException ex) {
            throw new TimeoutException("Redis did not answer the grant request for lease '" + name + "' within "
                    + TimeUnit.NANOSECONDS.toMillis(wait) + " ms (the server may be unreachable); the request is "
                    + "abandoned");
        }
        catch (ExecutionException ex) {
            throw ex.getCause() instanceof Exception cause ? cause : ex;
        }
    }

    /**
     * {@code PTTL key}, waiting no longer than {@code maxWait}.
     *
     * @return the key's remaining time to live in milliseconds ({@code -2}: no key), or null when Redis did not answer
     */
    Long remainingMillis(String key, Duration maxWait) throws InterruptedException {
        try {
            return commands().pttl(bytes(key)).get(Math.max(1, maxWait.toNanos()), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException | TimeoutException | RuntimeException ex) {
            return null; // the wait falls back to the engine's backoff pause
        }
    }

    private RedisClusterAsyncCommands<byte[], byte[]> commands() {
        // Closing the Spring connection leaves the shared native connection open; the future outlives it.
        try (RedisConnection connection = factory.getConnection()) {
            @SuppressWarnings("unchecked")
            RedisClusterAsyncCommands<byte[], byte[]> commands =
                    (RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
            opened = true;
            return commands;
        }
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
