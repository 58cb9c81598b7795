package dev.lease.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Deletes the znode {@code {root}/{name}} of names nobody held for a while. Only safe with zxid tokens: a re-created
 * znode starts again at version 0, but the zxid of its next grant is larger than every earlier one.
 *
 * <p>A name counts as idle once this process has seen its znode without a holder and unchanged (same version, same
 * child version) for {@code deleteIdleAfter}, on its own monotonic clock: no wall clocks are compared. The delete is
 * conditional on the version seen, and ZooKeeper refuses to delete a znode that has a child, so it can never remove a
 * held name or one granted meanwhile (a grant creates the holder and bumps the version in one {@code multi}); a grant
 * racing the delete fails on the missing znode, and the backend creates it again and grants afresh.
 *
 * <p>Only names marked as granted with zxid tokens ({@link LeasePaths#zxidMarker}) are deleted: an unmarked znode may
 * carry version tokens of an instance with {@code lease.zookeeper.token=version}. Before its first deletion the
 * sweeper marks the root, and an instance with version tokens then refuses to re-create a missing name's znode.
 */
final class IdleNameSweeper {

    private static final Duration LONGEST_PERIOD = Duration.ofMinutes(10);
    private static final Duration SHORTEST_PERIOD = Duration.ofMillis(100);
    /** How long a sweep waits for the answers to its reads; it is tried again at the next period. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(1);
    /**
     * Names of up to 255 characters (about 260 bytes each in a listing) stay under the client's default 1 MB
     * {@code jute.maxbuffer} up to about 4,000 names; names of typical length (such as {@code invoice-123456}, about
     * 20 bytes) up to about 50,000. A name has one to three znodes (itself, its marker, its holder); 20,000 znodes
     * keeps the listing of names up to about 50 characters under the limit.
     */
    static final int MAX_LISTED = 20_000;
    /** Reads of a sweep in flight at once: enough to hide the latency, few enough not to flood the connection. */
    static final int MAX_IN_FLIGHT = 500;
    /** The root's data while an instance deletes idle names under it. */
    private static final byte[] ROOT_MARK = "lease: idle names deleted, zxid tokens only".getBytes(StandardCharsets.UTF_8);
    private static final Log log = LogFactory.getLog(IdleNameSweeper.class);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final long idleNanos;
    private final LongSupplier nanoTime;
    /** Above this many znodes under the root, the root is not listed (see {@link #names()}). */
    private final int maxListed;
    private final int maxInFlight;
    /** Each name seen idle: the state it was seen in, and since when (on nanoTime). */
    private final Map<String, Seen> seen = new ConcurrentHashMap<>();
    /** The names this process granted or released, swept alone under a root too large to list. */
    private final Set<String> used = ConcurrentHashMap.newKeySet();
    private volatile boolean rootMarked;
    private volatile boolean warnedNoAuth;
    private volatile boolean warnedLarge;

    IdleNameSweeper(CuratorFramework client, LeasePaths paths, Duration deleteIdleAfter, LongSupplier nanoTime) {
        this(client, paths, deleteIdleAfter, nanoTime, MAX_LISTED, MAX_IN_FLIGHT);
    }

    IdleNameSweeper(CuratorFramework client, LeasePaths paths, Duration deleteIdleAfter, LongSupplier nanoTime,
            int maxListed, int maxInFlight) {
        this.client = client;
        this.paths = paths;
        this.idleNanos = deleteIdleAfter.toNanos();
        this.nanoTime = nanoTime;
        this.maxListed = maxListed;
        this.maxInFlight = maxInFlight;
    }

    /** How often to look: twice per idle period, within bounds, so a name goes about 1.5 periods after its last use. */
    static Duration period(Duration deleteIdleAfter) {
        Duration half = deleteIdleAfter.dividedBy(2);
        if (half.compareTo(SHORTEST_PERIOD) < 0) {
            return SHORTEST_PERIOD;
        }
        return half.compareTo(LONGEST_PERIOD) > 0 ? LONGEST_PERIOD : half;
    }

    /**
     * Sweeps every {@link #period} on a daemon thread of its own.
     *
     * @return what stops the sweeps
     */
    Runnable startSweeping() {
        ScheduledExecutorService sweeps = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "lease-zookeeper-idle-names");
            thread.setDaemon(true);
            return thread;
        });
        long period = period(Duration.ofNanos(idleNanos)).toMillis();
        sweeps.scheduleWithFixedDelay(this::sweepLogged, period, period, TimeUnit.MILLISECONDS);
        return sweeps::shutdownNow;
    }

    private void sweepLogged() {
        try {
            int deleted = sweep();
            if (deleted > 0) {
                log.debug("Deleted the znodes of " + deleted + " idle lease name(s) under " + paths.root());
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            log.debug("Could not look for idle lease names under " + paths.root() + " (tried again later): " + ex);
        }
    }

    /** Starts a name's idle time afresh: this process just granted or released it. */
    void forget(String name) {
        seen.remove(name);
        used.add(name);
    }

    /**
     * Looks at every name once (or, under a large root, at the names this process used) and deletes those idle for
     * long enough.
     *
     * @return how many names' znodes were deleted
     */
    int sweep() throws Exception {
        Collection<String> names = names();
        if (names == null) {
            seen.clear();
            used.clear();
            return 0;
        }
        // One read per name, sent before their answers are awaited (a bounded number in flight): a sweep of many names
        // costs a few round trips of latency, not one per name. Reading the clock before the reads can only make names
        // look less idle.
        long now = nanoTime.getAsLong();
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        Semaphore inFlight = new Semaphore(maxInFlight);
        Map<String, CompletableFuture<Stat>> stats = new LinkedHashMap<>();
        for (String name : names) {
            if (!inFlight.tryAcquire(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new TimeoutException("ZooKeeper did not answer the reads of idle lease names under "
                        + paths.root() + " in time");
            }
            stats.put(name, stat(name, inFlight));
        }
        int deleted = 0;
        for (Map.Entry<String, CompletableFuture<Stat>> entry : stats.entrySet()) {
            Stat stat;
            try {
                stat = entry.getValue().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            catch (ExecutionException ex) {
                throw ex.getCause() instanceof Exception cause ? cause : ex;
            }
            if (sweep(entry.getKey(), stat, now)) {
                deleted++;
            }
        }
        return deleted;
    }

    /**
     * The names to look at: every child of the root, unless the root has so many descendants that listing them could
     * exceed the client's {@code jute.maxbuffer} (1 MB by default), which drops the connection and with it every lease
     * of the client; then only the names this process used. Null when the root does not exist.
     */
    private Collection<String> names() throws Exception {
        String root = ZKPaths.fixForNamespace(client.getNamespace(), paths.root());
        int descendants;
        try {
            descendants = client.getZookeeperClient().getZooKeeper().getAllChildrenNumber(root);
        }
        catch (KeeperException.NoNodeException ex) {
            return null;
        }
        catch (KeeperException.UnimplementedException ex) {
            descendants = Integer.MAX_VALUE; // a server before 3.6 cannot count: do not risk listing
        }
        if (descendants > maxListed) {
            if (!warnedLarge) {
                warnedLarge = true;
                log.warn("Lease root " + paths.root() + " has " + descendants + " znodes under it (more than "
                        + maxListed + "): listing them could exceed the ZooKeeper client's jute.maxbuffer and drop the "
                        + "connection, so only the idle names this instance used are deleted. Names used by instances "
                        + "without lease.zookeeper.delete-idle-after stay.");
            }
            seen.keySet().retainAll(used);
            return List.copyOf(used);
        }
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.root());
        }
        catch (KeeperException.NoNodeException ex) {
            return null;
        }
        seen.keySet().retainAll(names);
        used.retainAll(names);
        return names;
    }

    private CompletableFuture<Stat> stat(String name, Semaphore inFlight) throws Exception {
        CompletableFuture<Stat> stat = new CompletableFuture<>();
        client.checkExists().inBackground((c, event) -> {
            inFlight.release();
            KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
            if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
                stat.complete(event.getStat());
            }
            else {
                stat.completeExceptionally(KeeperException.create(code, event.getPath()));
            }
        }).forPath(paths.counter(name));
        return stat;
    }

    private boolean sweep(String name, Stat stat, long now) throws Exception {
        if (stat == null) {
            seen.remove(name);
            used.remove(name);
            return false;
        }
        // Exactly one child: the zxid marker (checked by the delete) and no holder. An unmarked znode (no child) may
        // carry version tokens, and deleting it would send them back: it stays.
        if (stat.getNumChildren() != 1) {
            seen.remove(name);
            return false;
        }
        Seen before = seen.get(name);
        if (before == null || before.version() != stat.getVersion() || before.childVersion() != stat.getCversion()) {
            seen.put(name, new Seen(stat.getVersion(), stat.getCversion(), now));
            return false;
        }
        if (now - before.since() < idleNanos) {
            return false;
        }
        seen.remove(name);
        markRoot();
        try {
            // Conditional on the version seen idle; ZooKeeper also refuses while a holder (a child) exists, and the
            // marker's delete fails if the one child is not the marker.
            client.transaction().forOperations(
                    client.transactionOp().delete().forPath(paths.zxidMarker(name)),
                    client.transactionOp().delete().withVersion(stat.getVersion()).forPath(paths.counter(name)));
            used.remove(name);
            return true;
        }
        catch (KeeperException.BadVersionException | KeeperException.NotEmptyException
                | KeeperException.NoNodeException raced) {
            return false; // granted, or deleted by another instance, meanwhile
        }
        catch (KeeperException.NoAuthException denied) {
            if (!warnedNoAuth) {
                warnedNoAuth = true;
                log.warn("Idle lease names under " + paths.root() + " cannot be deleted: ZooKeeper refuses this "
                        + "client's identity the DELETE permission on " + paths.root() + " or on a name's znode ("
                        + denied.getMessage() + "). Leases still work, but znodes of names no longer used stay. Give "
                        + "the lease identity cdrwa on the root, or remove lease.zookeeper.delete-idle-after. Said "
                        + "once; later attempts are not logged.");
            }
            return false;
        }
    }

    /**
     * Marks the root before the first deletion: an instance with version tokens then refuses to re-create a missing
     * name's znode (which would start again at version 0, below the zxid tokens the name had).
     */
    private void markRoot() throws Exception {
        if (rootMarked) {
            return;
        }
        byte[] data = client.getData().forPath(paths.root());
        if (!marksRoot(data)) {
            client.setData().forPath(paths.root(), ROOT_MARK);
        }
        rootMarked = true;
    }

    /** Whether the root's data says an instance deletes idle names there. */
    static boolean marksRoot(byte[] data) {
        return Arrays.equals(data, ROOT_MARK);
    }

    private record Seen(int version, int childVersion, long since) {
    }
}
