package dev.lease.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;

/**
 * One independent Redis master of a Redlock: its shared Lettuce connection, used asynchronously so that the calls to
 * every node go out at once and each is awaited no longer than the per-node timeout, and its release channel.
 *
 * <p>A call never blocks on the connection: until the first connection is made (on a background thread) and while
 * Lettuce reconnects, it fails at once, as an unreachable node must, instead of waiting out a connect timeout that
 * would eat the lease's validity. One connection carries a node's grant request and the release that follows it, so
 * the node sees them in the order sent even when they were held up (a frozen link delivers both, in order).
 */
final class RedlockNode implements AutoCloseable {

    private final LettuceConnectionFactory factory;
    private final String address;
    private final ReleaseSignals signals;
    private final Executor connector;
    private final AtomicBoolean connecting = new AtomicBoolean();
    private volatile RedisAsyncCommands<byte[], byte[]> commands;

    RedlockNode(LettuceConnectionFactory factory, String releaseChannel, Executor connector) {
        if (!factory.getShareNativeConnection() || factory.isClusterAware() || factory.getValidateConnection()) {
            throw new IllegalArgumentException("Redlock node " + address(factory) + ": its LettuceConnectionFactory "
                    + "must share its native connection, connect to one standalone master (no cluster) and not "
                    + "validate its connection, so that a node's grant and release travel in order on one connection");
        }
        this.factory = factory;
        this.address = address(factory);
        this.signals = new ReleaseSignals(factory, releaseChannel);
        this.connector = connector;
    }

    /** host:port, never the password. */
    static String address(LettuceConnectionFactory factory) {
        return factory.getHostName() + ":" + factory.getPort();
    }

    String address() {
        return address;
    }

    ReleaseSignals signals() {
        return signals;
    }

    /**
     * Starts connecting in the background, unless connected or connecting already, so that the first lease does not
     * find the node unconnected.
     *
     * @return the attempt, done once connected or failed (for a node already connected or connecting, done at once)
     */
    CompletableFuture<Void> connect() {
        if (commands != null || !connecting.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        try {
            return CompletableFuture.runAsync(this::connectNow, connector);
        }
        catch (RuntimeException rejected) {
            connecting.set(false);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** {@code SET key owner NX PX ttl}: true when set. */
    CompletableFuture<Boolean> setIfAbsent(String key, String owner, long ttlMillis) {
        return call(c -> c.set(bytes(key), bytes(owner), SetArgs.Builder.nx().px(ttlMillis))).thenApply("OK"::equals);
    }

    /** The owner-checked renewal script over many keys: one answer (1 renewed, 0 not ours) per key, in order. */
    CompletableFuture<List<Object>> renew(byte[][] keys, byte[][] ownersAndTtls) {
        return call(c -> c.<List<Object>>eval(LeaseScripts.RENEW.getScriptAsString(), ScriptOutputType.MULTI, keys,
                ownersAndTtls));
    }

    /** The owner-checked release script, which also announces the release on this node's channel. */
    CompletableFuture<Long> release(String key, String owner, String channel, String name) {
        return call(c -> c.<Long>eval(LeaseScripts.RELEASE.getScriptAsString(), ScriptOutputType.INTEGER,
                new byte[][] { bytes(key) }, bytes(owner), bytes(channel), bytes(name)));
    }

    /** {@code PTTL key}: milliseconds left, -2 when there is no key. */
    CompletableFuture<Long> remainingMillis(String key) {
        return call(c -> c.pttl(bytes(key)));
    }

    CompletableFuture<String> ping() {
        return call(RedisAsyncCommands::ping);
    }

    private <T> CompletableFuture<T> call(Function<RedisAsyncCommands<byte[], byte[]>, RedisFuture<T>> command) {
        RedisAsyncCommands<byte[], byte[]> kept = commands;
        if (kept == null) {
            connect();
            return CompletableFuture.failedFuture(new IllegalStateException("not connected yet"));
        }
        if (!kept.getStatefulConnection().isOpen()) {
            // Lettuce reconnects on its own; a command queued meanwhile would reach the node late, if ever. Never
            // queued on the connection attempt either: its callbacks would not keep a grant before its release.
            return CompletableFuture.failedFuture(new IllegalStateException("disconnected, reconnecting"));
        }
        try {
            return command.apply(kept).toCompletableFuture();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private void connectNow() {
        try (RedisConnection connection = factory.getConnection()) {
            // Closing the Spring connection leaves the shared native connection open.
            if (connection.getNativeConnection() instanceof RedisAsyncCommands<?, ?> shared) {
                @SuppressWarnings("unchecked")
                RedisAsyncCommands<byte[], byte[]> taken = (RedisAsyncCommands<byte[], byte[]>) shared;
                commands = taken;
            }
        }
        catch (RuntimeException unreachable) {
            // Tried again on the next call. // Tried again on the next call.
        }
        finally {
            connecting.set(false);
        }
    }

    @Override
    public void close() {
        signals.close();
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
