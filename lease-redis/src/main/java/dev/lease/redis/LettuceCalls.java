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
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;

/**
 * The calls of the wait for a lease, sent on the shared native connection of a {@link LettuceConnectionFactory} and
 * awaited no longer than the caller's deadline. Lettuce's own command timeout (60 s unless configured) is far longer
 * than a caller usually waits, so without this the engine calls the backend on a helper thread, which costs two
 * thread hand-offs per grant: on a local Redis, as much as the round trip itself.
 *
 * <p>One connection carries a grant request and its {@link #abandon}, so Redis sees them in the order sent, whatever
 * became of the request. That rules out what would break the order or block: a pooled, dedicated connection (it goes
 * back to the pool with the request in flight), Redis Cluster (Lettuce may write a command to a node that is still
 * connecting after a later one), and a factory that validates its connection (a blocking {@code PING} on every use).
 * The connection is taken from the factory once and kept while open, so a call never waits on the factory.
 */
final class LettuceCalls {

    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisFuture",
            LettuceCalls.class.getClassLoader());

    private final LettuceConnectionFactory factory;
    /** The shared connection's commands, taken at the first call and again if the factory replaced it. */
    private volatile RedisAsyncCommands<byte[], byte[]> commands;

    private LettuceCalls(LettuceConnectionFactory factory) {
        this.factory = factory;
    }

    /** The bounded calls for {@code factory}, or null when it cannot keep a request and its abandon in order. */
    static LettuceCalls of(RedisConnectionFactory factory) {
        if (LETTUCE_PRESENT && factory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection()
                && !lettuce.isClusterAware() && !lettuce.getValidateConnection()) {
            return new LettuceCalls(lettuce);
        }
        return null;
    }

    /**
     * Whether calls return by their deadline: while the kept connection is open. Before it is taken, or once the
     * factory closed it, taking one may block for Lettuce's connect timeout.
     */
    boolean bounded() {
        RedisAsyncCommands<byte[], byte[]> kept = commands;
        return kept != null && kept.getStatefulConnection().isOpen();
    }

    /**
     * {@code SET key owner NX PX ttl}, waiting no longer than {@code deadline}, nor than the client's command timeout
     * (a direct caller of the backend may give no deadline at all).
     *
     * @return whether the key was set
     * @throws TimeoutException when Redis did not answer in time (the request may still be applied)
     */
    boolean setIfAbsent(String key, String owner, long ttlMillis, long deadline, String name) throws Exception {
        long wait = Math.min(Math.max(0, deadline - System.nanoTime()),
                TimeUnit.MILLISECONDS.toNanos(factory.getTimeout()));
        RedisFuture<String> set = commands().set(bytes(key), bytes(owner), SetArgs.Builder.nx().px(ttlMillis));
        try {
            return "OK".equals(await(set, wait));
        }
        catch (TimeoutException ex) {
            throw new TimeoutException("Redis did not answer the grant request for lease '" + name + "' within "
                    + TimeUnit.NANOSECONDS.toMillis(wait) + " ms (the server may be unreachable); the request is "
                    + "abandoned");
        }
    }

    /**
     * Runs the release script for a request's attempt on the connection that carried the request, so that it reaches
     * Redis after it.
     */
    void abandon(String key, String attempt, String channel, String name) throws Exception {
        RedisFuture<Long> released = commands().eval(LeaseScripts.RELEASE.getScriptAsString(), ScriptOutputType.INTEGER,
                new byte[][] { bytes(key) }, bytes(attempt), bytes(channel), bytes(name));
        await(released, TimeUnit.MILLISECONDS.toNanos(factory.getTimeout()));
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

    /** The answer, or what Redis answered instead (not wrapped in an {@link ExecutionException}). */
    private static <T> T await(RedisFuture<T> answer, long nanos) throws Exception {
        try {
            return answer.get(nanos, TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw ex.getCause() instanceof Exception cause ? cause : ex;
        }
    }

    private RedisAsyncCommands<byte[], byte[]> commands() {
        RedisAsyncCommands<byte[], byte[]> kept = commands;
        if (kept != null && kept.getStatefulConnection().isOpen()) {
            return kept;
        }
        // Closing the Spring connection leaves the shared native connection open.
        try (RedisConnection connection = factory.getConnection()) {
            if (!(connection.getNativeConnection() instanceof RedisAsyncCommands<?, ?> shared)) {
                throw new IllegalStateException("The Lettuce connection factory gave no shared standalone connection");
            }
            @SuppressWarnings("unchecked")
            RedisAsyncCommands<byte[], byte[]> taken = (RedisAsyncCommands<byte[], byte[]>) shared;
            commands = taken;
            return taken;
        }
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
