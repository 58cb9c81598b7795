package dev.lease.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * Redis's multi-master algorithm (Redlock) over N independent Redis masters, N odd and at least 3, for
 * {@code EFFICIENCY} leases only.
 *
 * <p>A grant sends {@code SET key owner NX PX ttl} to every node at once, the same owner everywhere, and counts it
 * granted when a majority (N/2+1) set the key within the validity {@code ttl - elapsed - (ttl × drift + 2 ms)}, with
 * {@code elapsed} measured on the monotonic clock from before the first request; each node is waited for at most the
 * per-node timeout. Otherwise the key is released on every node and the engine tries again after a random pause
 * while the caller may wait. Renewal extends the key on every node where it is still ours (the Redis backend's
 * owner-checked script) and holds when a majority did so within the validity; release runs on every node by owner.
 * Its {@link #traits() validity margin} hands the drift allowance to the engine, whose local validity is then
 * {@code ttl - (ttl × drift + 2 ms)} from before the request.
 *
 * <p>Survives one node in three lost or partitioned (two in five). Does not survive what the algorithm assumes away:
 * clocks that jump on a majority, a node restarted without persistence within a ttl, a holder that pauses past its
 * validity. There is no fencing token, hence no {@code CORRECTNESS}: see docs/redlock.md.
 */
public final class RedlockLeaseBackend implements LeaseBackend<RedlockGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "redlock";

    /** The default {@code lease.redlock.clock-drift-factor}. */
    public static final double DEFAULT_CLOCK_DRIFT_FACTOR = 0.01;

    /** The per-node timeout, unless configured, is this fraction of the ttl... */
    static final double NODE_TIMEOUT_FRACTION = 0.05;
    /** ...but no shorter than this. */
    static final Duration MIN_NODE_TIMEOUT = Duration.ofMillis(10);
    /** The longest random pause before retrying when no holder has a majority (split votes, keys released). */
    static final Duration MAX_RETRY_JITTER = Duration.ofMillis(10);
    /** The longest the constructor waits for the first connections. */
    private static final Duration FIRST_CONNECT_WAIT = Duration.ofSeconds(30);
    /** How long a wait looks at the keys' time to live before it listens for releases. */
    private static final Duration PTTL_WAIT = Duration.ofMillis(100);
    /** The part of the drift allowance that does not grow with the ttl: Redis's expiry precision. */
    private static final Duration FIXED_DRIFT = Duration.ofMillis(2);

    private final List<RedlockNode> nodes;
    private final String keyPrefix;
    private final String releaseChannel;
    private final BackendTraits traits;
    private final Duration nodeTimeout;
    private final int majority;
    private final ExecutorService connector;

    /**
     * @param nodes one connection factory per independent master, each sharing its native connection (Spring Boot's
     *        default), standalone, not validating its connection; started by the caller, who also closes them
     * @param keyPrefix prefix of every lease key on every node, such as {@code lease:}
     * @param clockDriftFactor the share of the ttl allowed for the nodes' clocks drifting apart, e.g. 0.01
     * @param nodeTimeout how long each node is waited for per call, or null for 5 % of the lease's ttl (at least
     *        10 ms)
     * @throws IllegalArgumentException for fewer than 3 nodes, an even number, a drift factor outside [0, 0.5), a
     *         non-positive node timeout or a bad key prefix
     */
    public RedlockLeaseBackend(List<LettuceConnectionFactory> nodes, String keyPrefix, double clockDriftFactor,
            Duration nodeTimeout) {
        if (nodes.size() < 3 || nodes.size() % 2 == 0) {
            throw new IllegalArgumentException(oddNodesMessage(nodes.size()));
        }
        if (!(clockDriftFactor >= 0 && clockDriftFactor < 0.5)) {
            throw new IllegalArgumentException("lease.redlock.clock-drift-factor=" + clockDriftFactor + " is outside "
                    + "[0, 0.5): it is the share of the ttl set aside for the nodes' clocks drifting apart; use 0.01 "
                    + "(the default) unless the nodes' clocks are known to drift more.");
        }
        if (nodeTimeout != null && (nodeTimeout.isZero() || nodeTimeout.isNegative())) {
            throw new IllegalArgumentException("lease.redlock.node-timeout=" + nodeTimeout + " is not positive; "
                    + "remove it for 5 % of each lease's ttl, or set a few milliseconds to a few hundred.");
        }
        this.keyPrefix = RedisLeaseBackend.validateKeyPrefix(keyPrefix, "lease.redlock.key-prefix");
        this.releaseChannel = keyPrefix + "released";
        this.traits = BackendTraits.unfenced("Redlock issues no fencing token (a grant is a majority of independent "
                + "keys, and nothing orders one grant after another), and its safety rests on timing assumptions that "
                + "Martin Kleppmann showed do not hold in practice: bounded clock drift across the nodes (a clock jump "
                + "on a majority, or a node restarted without persistence, grants the lease twice), and bounded "
                + "process pauses and network delays of the holder")
                .withRenewsInOneCall(true)
                .withBoundsCallsByDeadline(true)
                .withValidityMargin(clockDriftFactor, FIXED_DRIFT);
        this.nodeTimeout = nodeTimeout;
        this.majority = nodes.size() / 2 + 1;
        this.connector = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "lease-redlock-connect");
            thread.setDaemon(true);
            return thread;
        });
        List<RedlockNode> created = new ArrayList<>();
        for (LettuceConnectionFactory factory : nodes) {
            created.add(new RedlockNode(factory, releaseChannel, connector));
        }
        this.nodes = List.copyOf(created);
        awaitFirstConnections();
    }

    /**
     * Connects to every node at once and waits for each attempt to end (a node that is down refuses at once; one that
     * does not answer, within its factory's connect timeout), so that leases find the reachable nodes connected.
     * A node that could not be reached is connected again in the background when a call finds it unconnected.
     */
    private void awaitFirstConnections() {
        CompletableFuture<?>[] attempts = nodes.stream().map(RedlockNode::connect).toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(attempts).get(FIRST_CONNECT_WAIT.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException stillConnecting) {
            // The attempts go on in the background.
        }
    }

    /** Why {@code count} nodes cannot make a Redlock, naming the property; shared with the auto-configuration. */
    public static String oddNodesMessage(int count) {
        return "lease.redlock.nodes lists " + count + " node" + (count == 1 ? "" : "s") + ", but Redlock needs an odd "
                + "number of at least 3 independent Redis masters: a majority of " + count + " is " + (count / 2 + 1)
                + (count < 3 ? ", so losing any node stops every lease (and with one node plain Redis does the same "
                        + "job: lease.efficiency-backend: redis)" : ", the same as of " + (count + 1) + " nodes, so the "
                        + "extra node adds load but survives no more failures") + ". List 3 or 5 redis:// URIs.";
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Unfenced. The validity margin is {@code ttl × clock-drift-factor + 2 ms}: the nodes' clocks may run that much
     * faster than this process's. Calls are bounded by their deadline: every node is awaited for at most the per-node
     * timeout, and connecting happens in the background. One script call per node renews a whole batch.
     */
    @Override
    public BackendTraits traits() {
        return traits;
    }

    /** How long each node is waited for per call, for a lease of this ttl. */
    public Duration nodeTimeout(Duration ttl) {
        if (nodeTimeout != null) {
            return nodeTimeout;
        }
        Duration derived = Duration.ofNanos((long) (ttl.toNanos() * NODE_TIMEOUT_FRACTION));
        return derived.compareTo(MIN_NODE_TIMEOUT) < 0 ? MIN_NODE_TIMEOUT : derived;
    }

    /**
     * @throws IllegalStateException when fewer than a majority of the nodes answered at all, or a majority set the key
     *         but too late to leave any validity; the engine then abandons the request (releases it on every node)
     */
    @Override
    public Optional<RedlockGrant> tryAcquire(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        long ttlMillis = RedisLeaseBackend.ttlMillis(request.ttl());
        RedlockGrant grant = new RedlockGrant(name, key(name), request.attempt(), ttlMillis);
        long start = System.nanoTime();
        long validityEnd = start + request.ttl().toNanos() - traits.validityMargin(request.ttl()).toNanos();
        Quorum quorum = new Quorum(nodes.size());
        for (RedlockNode node : nodes) {
            quorum.count(node.address(), node.setIfAbsent(grant.key(), grant.owner(), ttlMillis), Boolean::booleanValue);
        }
        boolean granted = quorum.await(earliest(earliest(start + nodeTimeout(request.ttl()).toNanos(),
                request.deadline()), validityEnd));
        if (granted && validityEnd - System.nanoTime() > 0) {
            return Optional.of(grant);
        }
        // Every node, including those that did not answer: a late SET reaches its node before this release.
        releaseEverywhere(grant.key(), grant.owner(), name);
        if (granted) {
            throw new IllegalStateException("Redlock lease '" + name + "': a majority set the key, but only after the "
                    + "validity (ttl - drift allowance) ran out; raise the ttl or check the nodes' latency");
        }
        if (quorum.answered() < majority) {
            throw new IllegalStateException("Redlock lease '" + name + "' cannot be granted: fewer than a majority ("
                    + majority + ") of the nodes answered" + (quorum.stoppedEarly() ? ""
                            : " within " + nodeTimeout(request.ttl()).toMillis() + " ms") + ": " + quorum.describe());
        }
        return Optional.empty();
    }

    @Override
    public boolean renew(RedlockGrant grant) throws Exception {
        return renewAll(List.of(grant)).isEmpty();
    }

    /**
     * One renewal script call per node for the whole batch; a grant is renewed when a majority of the nodes extended
     * its key within its validity, counted from before the first call.
     *
     * @throws IllegalStateException when fewer than a majority of the nodes answered at all
     */
    @Override
    public Set<RedlockGrant> renewAll(Collection<RedlockGrant> grants) throws Exception {
        if (grants.isEmpty()) {
            return Set.of();
        }
        List<RedlockGrant> batch = List.copyOf(grants);
        long start = System.nanoTime();
        byte[][] keys = new byte[batch.size()][];
        byte[][] args = new byte[2 * batch.size()][];
        long shortestTtl = Long.MAX_VALUE;
        for (int i = 0; i < batch.size(); i++) {
            RedlockGrant g = batch.get(i);
            keys[i] = bytes(g.key());
            args[2 * i] = bytes(g.owner());
            args[2 * i + 1] = bytes(Long.toString(g.ttlMillis()));
            shortestTtl = Math.min(shortestTtl, g.ttlMillis());
        }
        Duration ttl = Duration.ofMillis(shortestTtl);
        long validityEnd = start + ttl.toNanos() - traits.validityMargin(ttl).toNanos();
        List<Quorum> quorums = new ArrayList<>();
        batch.forEach(g -> quorums.add(new Quorum(nodes.size())));
        Quorum reached = new Quorum(nodes.size());
        for (RedlockNode node : nodes) {
            // The grants' quorums count the answer only after `reached` has: else they could all be decided while
            // `reached` still misses the deciding node's answer, and a lost grant would fail the whole batch.
            CompletableFuture<List<Object>> answer = reached.count(node.address(), node.renew(keys, args),
                    list -> true);
            for (int i = 0; i < batch.size(); i++) {
                int index = i;
                quorums.get(i).count(node.address(), answer, list -> list.size() == batch.size()
                        && ((Number) list.get(index)).longValue() == 1L);
            }
        }
        long until = earliest(start + nodeTimeout(ttl).toNanos(), validityEnd);
        Set<RedlockGrant> lost = new HashSet<>();
        for (int i = 0; i < batch.size(); i++) {
            if (!quorums.get(i).await(until) || validityEnd - System.nanoTime() <= 0) {
                lost.add(batch.get(i));
            }
        }
        if (!lost.isEmpty() && reached.answered() < majority) {
            throw new IllegalStateException("Redlock renewal reached fewer than a majority (" + majority + ") of the "
                    + "nodes within " + nodeTimeout(ttl).toMillis() + " ms: " + reached.describe());
        }
        return lost;
    }

    /**
     * Deletes the key on every node where it is still ours, announcing the release there.
     *
     * @throws IllegalStateException when fewer than a majority confirmed (the rest expires within the ttl)
     */
    @Override
    public void release(RedlockGrant grant) throws Exception {
        Quorum confirmed = releaseEverywhere(grant.key(), grant.owner(), grant.name());
        if (!confirmed.await(System.nanoTime() + nodeTimeout(Duration.ofMillis(grant.ttlMillis())).toNanos())) {
            throw new IllegalStateException("Redlock release of lease '" + grant.name() + "' confirmed by fewer than a "
                    + "majority of the nodes (the rest expires on its own): " + confirmed.describe());
        }
    }

    /** Releases what the request may have set, on every node, as {@link #release} would. */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        release(new RedlockGrant(name, key(name), request.attempt(), RedisLeaseBackend.ttlMillis(request.ttl())));
    }

    /**
     * Waits until a majority of the nodes announced a release of {@code name}, or until the key's time to live ran out
     * on a majority, or {@code maxWait}. When the key is already gone from a majority (no holder has one: votes split
     * between contenders, who released), returns after a random pause of up to 10 ms, so that contenders retry out of
     * step.
     */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        long until = System.nanoTime() + maxWait.toNanos();
        String key = key(name);
        CountDownLatch released = new CountDownLatch(majority);
        nodes.forEach(node -> node.signals().watch(name, released));
        try {
            // Checked after subscribing: a release between the failed attempt and now must not be slept through.
            List<CompletableFuture<Long>> ttls = nodes.stream().map(node -> node.remainingMillis(key)).toList();
            long lookUntil = earliest(until, System.nanoTime() + PTTL_WAIT.toNanos());
            long[] left = new long[ttls.size()];
            for (int i = 0; i < ttls.size(); i++) {
                left[i] = Long.MAX_VALUE; // unknown counts as held until the wait ends
                try {
                    long answer = ttls.get(i).get(Math.max(0, lookUntil - System.nanoTime()), TimeUnit.NANOSECONDS);
                    left[i] = answer == -2 ? 0 : answer < 0 ? Long.MAX_VALUE : answer;
                }
                catch (ExecutionException | TimeoutException unknown) {
                    // The node is down or slow: its release message, if any, still counts.
                }
            }
            Arrays.sort(left);
            long freeOnMajorityIn = left[majority - 1];
            long waitNanos = until - System.nanoTime();
            if (freeOnMajorityIn == 0) {
                long jitter = ThreadLocalRandom.current().nextLong(MAX_RETRY_JITTER.toNanos() + 1);
                TimeUnit.NANOSECONDS.sleep(Math.max(0, Math.min(waitNanos, jitter)));
                return;
            }
            if (freeOnMajorityIn != Long.MAX_VALUE) {
                waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(freeOnMajorityIn + 1));
            }
            released.await(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
        }
        finally {
            nodes.forEach(node -> node.signals().forget(name, released));
        }
    }

    /**
     * PINGs every node at once and waits up to {@code timeout}.
     *
     * @return each node's answer (by host:port, never with its password) and the majority needed
     * @throws IllegalStateException when fewer than a majority answered, listing who did not
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) throws Exception {
        Map<String, CompletableFuture<String>> answers = new LinkedHashMap<>();
        nodes.forEach(node -> answers.put(node.address(), node.ping()));
        try {
            CompletableFuture.allOf(answers.values().toArray(CompletableFuture[]::new))
                    .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException | TimeoutException someFailed) {
            // Told node by node below.
        }
        Map<String, String> perNode = new LinkedHashMap<>();
        answers.forEach((address, ping) -> perNode.put(address, !ping.isDone() ? "no answer"
                : ping.isCompletedExceptionally() ? "failed" : ping.join()));
        long up = answers.values().stream().filter(ping -> ping.isDone() && !ping.isCompletedExceptionally()).count();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("nodes", perNode);
        details.put("majority", majority + " of " + nodes.size());
        details.put("keyPrefix", keyPrefix);
        if (up < majority) {
            throw new IllegalStateException("fewer than a majority (" + majority + " of " + nodes.size()
                    + ") of the Redlock nodes answer a PING: " + perNode);
        }
        return details;
    }

    /** The nodes as host:port (never with a password), in configuration order. */
    public List<String> nodeAddresses() {
        return nodes.stream().map(RedlockNode::address).toList();
    }

    /** The key holding lease {@code name} on every node. */
    public String key(String name) {
        return keyPrefix + name;
    }

    /** Stops the release subscriptions; the connection factories are the caller's to close. */
    @Override
    public void close() {
        nodes.forEach(RedlockNode::close);
        connector.shutdownNow();
    }

    private Quorum releaseEverywhere(String key, String owner, String name) {
        Quorum answered = new Quorum(nodes.size());
        for (RedlockNode node : nodes) {
            answered.count(node.address(), node.release(key, owner, releaseChannel, name), any -> true);
        }
        return answered;
    }

    /** The earlier of two {@link System#nanoTime()} values, compared by difference. */
    private static long earliest(long a, long b) {
        return b - a < 0 ? b : a;
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
