package dev.lease.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.LeaseNames;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Leases as Redis keys: {@code SET key owner NX PX ttl}, renewed and released by Lua scripts that act only while
 * the key still holds this grant's random owner id. For {@code EFFICIENCY} leases only: Redis issues no fencing
 * token, expires keys by the server's wall-clock time and replicates asynchronously, so two holders remain
 * possible after a pause, a clock jump or a failover.
 *
 * <p>The engine renews the leases due about the same time with {@link #renewAll}, which is one script call for the
 * whole batch (on Redis Cluster, where the keys of different leases live in different hash slots, one call per
 * lease); a release publishes the lease name on {@code <prefix>released}, which wakes instances waiting for that
 * lease.
 */
public final class RedisLeaseBackend implements LeaseBackend<RedisGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "redis";

    /** The default key prefix ({@code lease.redis.key-prefix}). */
    public static final String DEFAULT_KEY_PREFIX = "lease:";

    static final int MAX_KEY_PREFIX_LENGTH = 64;

    private static final BackendTraits TRAITS = BackendTraits.unfenced("Redis issues no fencing token, its key expiry "
            + "follows the Redis server's wall-clock time, and its replication is asynchronous (a failover can lose a "
            + "granted lease and grant it again)");

    private final StringRedisTemplate redis;
    private final String keyPrefix;
    private final String releaseChannel;
    /** The lease names of the batch renewal sent last, while it is in flight; for tests. */
    private final AtomicReference<List<String>> inFlight = new AtomicReference<>(List.of());
    private final ReleaseSignals releaseSignals;
    /** The calls awaited no longer than their deadline, or null when the factory is not a sharing Lettuce one. */
    private final LettuceCalls lettuce;
    private volatile Boolean cluster;

    /**
     * @param connectionFactory the application's Redis connection; its command timeout should be well below the
     *        renewal interval, so that an unreachable server turns into a failed renewal rather than a late one
     * @param keyPrefix prefix of every lease key, such as {@code lease:}
     * @throws IllegalArgumentException when the prefix is empty, too long or contains white space, control or glob
     *         characters
     */
    public RedisLeaseBackend(RedisConnectionFactory connectionFactory, String keyPrefix) {
        this.keyPrefix = validateKeyPrefix(keyPrefix);
        this.redis = new StringRedisTemplate(connectionFactory);
        this.releaseChannel = keyPrefix + "released";
        this.releaseSignals = new ReleaseSignals(connectionFactory, releaseChannel);
        this.lettuce = LettuceCalls.of(connectionFactory);
        // Such a factory is not cluster-aware; any other is asked on the first grant request (see tryAcquire).
        this.cluster = lettuce != null ? Boolean.FALSE : null;
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Unfenced. One script call renews a whole batch, except on Redis Cluster, where one script cannot span hash slots
     * and {@link #renewAll} renews grant by grant: the engine then renews each grant on its own, in parallel (as it
     * does until the first grant request has shown whether the store is a cluster).
     *
     * <p>Calls are bounded by their deadline on a {@code LettuceConnectionFactory} that shares its native connection
     * (Spring Boot's default), is not cluster-aware and does not validate its connection, while that connection is
     * open: grant requests and waits are then sent asynchronously and awaited no longer than their deadline, so the
     * engine calls them on the caller's thread. Other clients block for their own command timeout.
     */
    @Override
    public BackendTraits traits() {
        Boolean known = cluster;
        return TRAITS.withRenewsInOneCall(known != null && !known)
                .withBoundsCallsByDeadline(lettuce != null && lettuce.bounded());
    }

    @Override
    public Optional<RedisGrant> tryAcquire(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        // The request's attempt id is the owner, so that abandon can tell the key this very request may have set.
        RedisGrant grant = new RedisGrant(name, key(name), request.attempt(), ttlMillis(request.ttl()));
        if (lettuce == null) {
            // Learnt here, on a connection the grant takes anyway, so that traits() never has to take one.
            isCluster();
        }
        boolean set = lettuce != null
                ? lettuce.setIfAbsent(grant.key(), grant.owner(), grant.ttlMillis(), request.deadline(), name)
                : Boolean.TRUE.equals(redis.opsForValue().setIfAbsent(grant.key(), grant.owner(),
                        Duration.ofMillis(grant.ttlMillis())));
        return set ? Optional.of(grant) : Optional.empty();
    }

    @Override
    public boolean renew(RedisGrant g) {
        return renewInOneScript(List.of(g))[0];
    }

    /**
     * Renews the batch in one script call, which checks each key's owner and extends each key still ours; the engine
     * groups the renewals that are due into such batches. On Redis Cluster one script may not touch keys of different
     * hash slots, so each grant is renewed on its own there.
     *
     * @return the grants whose key no longer holds their owner id (expired, deleted or taken over)
     */
    @Override
    public Set<RedisGrant> renewAll(Collection<RedisGrant> grants) throws Exception {
        if (grants.isEmpty()) {
            return Set.of();
        }
        if (isCluster()) {
            return LeaseBackend.super.renewAll(grants);
        }
        List<RedisGrant> batch = List.copyOf(grants);
        List<String> names = batch.stream().map(RedisGrant::name).toList();
        inFlight.set(names);
        try {
            boolean[] renewed = renewInOneScript(batch);
            Set<RedisGrant> lost = new HashSet<>();
            for (int i = 0; i < renewed.length; i++) {
                if (!renewed[i]) {
                    lost.add(batch.get(i));
                }
            }
            return lost;
        }
        finally {
            inFlight.compareAndSet(names, List.of());
        }
    }

    @Override
    public void release(RedisGrant g) {
        redis.execute(LeaseScripts.RELEASE, List.of(g.key()), g.owner(), releaseChannel, g.name());
    }

    /**
     * Deletes the key if it still holds the request's attempt id, as {@link #release} would: the {@code SET} may have
     * been applied although its answer never came back (a timeout, an interrupt).
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        if (lettuce != null) {
            lettuce.abandon(key(name), request.attempt(), releaseChannel, name);
            return;
        }
        redis.execute(LeaseScripts.RELEASE, List.of(key(name)), request.attempt(), releaseChannel, name);
    }

    /**
     * Waits for the release announcement of {@code name}, or for its key's remaining time to live, or
     * {@code maxWait}, whichever comes first.
     */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        long until = System.nanoTime() + maxWait.toNanos();
        CountDownLatch released = releaseSignals.watch(name);
        try {
            // Checked after subscribing: a release between the failed attempt and now must not be slept through.
            Long pttl = lettuce != null ? lettuce.remainingMillis(key(name), maxWait) : remainingMillis(key(name));
            if (pttl != null && pttl == -2) {
                return;
            }
            // What the PTTL took counts against maxWait.
            long waitNanos = until - System.nanoTime();
            if (pttl != null && pttl >= 0) {
                waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(pttl + 1));
            }
            released.await(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
        }
        finally {
            releaseSignals.forget(name, released);
        }
    }

    /** The Redis key holding lease {@code name}. */
    public String key(String name) {
        return keyPrefix + name;
    }

    /** The pub/sub channel on which releases are announced. */
    public String releaseChannel() {
        return releaseChannel;
    }

    /**
     * Sends a {@code PING}, within the connection's own timeouts, so that an unreachable server shows at startup
     * rather than on the first lease.
     *
     * @throws DataAccessException when Redis does not answer
     */
    public void ping() {
        redis.execute((RedisCallback<String>) connection -> connection.ping());
    }

    /**
     * Sends a {@code PING}. The client's own command timeout bounds it, not {@code timeout}: Redis clients take no
     * per-call timeout, and the caller stops waiting at its own bound anyway.
     *
     * @return the server's answer ({@code PONG}) and the key prefix
     * @throws DataAccessException when Redis does not answer
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) {
        String pong = redis.execute((RedisCallback<String>) connection -> connection.ping());
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("ping", pong);
        details.put("keyPrefix", keyPrefix);
        return details;
    }

    /** Stops the release subscription. */
    @Override
    public void close() {
        releaseSignals.close();
    }

    /**
     * Checks a key prefix: non-empty, so lease keys never mix with the application's own keys, and free of white
     * space, control and glob characters, so that {@code SCAN MATCH <prefix>*} finds exactly the lease keys.
     *
     * @throws IllegalArgumentException saying what is wrong and how to fix it
     */
    public static String validateKeyPrefix(String prefix) {
        return validateKeyPrefix(prefix, "lease.redis.key-prefix");
    }

    /** As {@link #validateKeyPrefix(String)}, naming {@code property} in the fix. */
    static String validateKeyPrefix(String prefix, String property) {
        String fix = ". Set " + property + " to a short plain prefix such as '" + DEFAULT_KEY_PREFIX + "' or 'myapp:lease:'.";
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("The Redis lease key prefix is empty, so lease keys would mix with "
                    + "other keys" + fix);
        }
        if (prefix.length() > MAX_KEY_PREFIX_LENGTH) {
            throw new IllegalArgumentException("The Redis lease key prefix is " + prefix.length()
                    + " characters long, at most " + MAX_KEY_PREFIX_LENGTH + " are allowed" + fix);
        }
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c) || "*?[]\\".indexOf(c) >= 0) {
                throw new IllegalArgumentException("The Redis lease key prefix '" + prefix.replaceAll("\\p{Cntrl}", "?")
                        + "' contains " + (Character.isISOControl(c) ? String.format("U+%04X", (int) c) : "'" + c + "'")
                        + ", which is not allowed in a lease key prefix (white space, control and glob characters)" + fix);
            }
        }
        return prefix;
    }

    /** The lease names of the batch renewal sent last, in the order sent, while it is in flight; for tests. */
    List<String> renewalsInFlight() {
        return inFlight.get();
    }

    private boolean[] renewInOneScript(List<RedisGrant> grants) {
        List<String> keys = new ArrayList<>(grants.size());
        Object[] args = new Object[2 * grants.size()];
        for (int i = 0; i < grants.size(); i++) {
            RedisGrant g = grants.get(i);
            keys.add(g.key());
            args[2 * i] = g.owner();
            args[2 * i + 1] = Long.toString(g.ttlMillis());
        }
        List<?> result = redis.execute(LeaseScripts.RENEW, keys, args);
        boolean[] renewed = new boolean[grants.size()];
        if (result == null || result.size() != grants.size()) {
            throw new IllegalStateException("Redis answered " + result + " to the renewal of " + grants.size()
                    + " leases");
        }
        for (int i = 0; i < renewed.length; i++) {
            renewed[i] = ((Number) result.get(i)).longValue() == 1L;
        }
        return renewed;
    }

    private Long remainingMillis(String key) {
        try {
            return redis.execute((RedisCallback<Long>) connection -> connection.keyCommands()
                    .pTtl(key.getBytes(StandardCharsets.UTF_8)));
        }
        catch (DataAccessException ex) {
            // Redis unreachable: the wait falls back to the engine's backoff pause.
            return null;
        }
    }

    private boolean isCluster() {
        Boolean known = cluster;
        if (known == null) {
            known = Boolean.TRUE.equals(redis.execute(
                    (RedisCallback<Boolean>) connection -> connection instanceof RedisClusterConnection));
            cluster = known;
        }
        return known;
    }

    /** Rounded up: the server must never expire the key before this process stops believing in the lease. */
    static long ttlMillis(Duration ttl) {
        long millis = ttl.toMillis();
        return ttl.minusMillis(millis).isZero() ? Math.max(1, millis) : millis + 1;
    }
}
