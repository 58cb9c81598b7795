package dev.lease.zookeeper;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.curator.framework.CuratorFramework;
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
 */
final class IdleNameSweeper {

    private static final Duration LONGEST_PERIOD = Duration.ofMinutes(10);
    private static final Duration SHORTEST_PERIOD = Duration.ofMillis(100);
    /** How long a sweep waits for the answers to its reads; it is tried again at the next period. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(1);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final long idleNanos;
    private final LongSupplier nanoTime;
    /** Each name seen idle: the state it was seen in, and since when (on nanoTime). */
    private final Map<String, Seen> seen = new ConcurrentHashMap<>();

    IdleNameSweeper(CuratorFramework client, LeasePaths paths, Duration deleteIdleAfter, LongSupplier nanoTime) {
        this.client = client;
        this.paths = paths;
        this.idleNanos = deleteIdleAfter.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Refuses settings under which deleting idle names would send tokens back, or that make no sense. */
    static void validate(ZooKeeperTokenSource tokenSource, Duration deleteIdleAfter) {
        if (tokenSource != ZooKeeperTokenSource.ZXID) {
            throw new IllegalArgumentException("lease.zookeeper.delete-idle-after (" + deleteIdleAfter + ") needs "
                    + "lease.zookeeper.token=zxid, but the token is '" + tokenSource.name().toLowerCase() + "': a "
                    + "deleted znode is re-created at version 0, so version tokens would go back. Set "
                    + "lease.zookeeper.token=zxid (tokens keep rising when switching from version to zxid), or remove "
                    + "lease.zookeeper.delete-idle-after to keep idle names.");
        }
        if (deleteIdleAfter.isNegative() || deleteIdleAfter.isZero()) {
            throw new IllegalArgumentException("lease.zookeeper.delete-idle-after must be positive, not "
                    + deleteIdleAfter + ". Set it to a duration such as 1h, or remove it to keep idle names.");
        }
    }

    /** How often to look: twice per idle period, within bounds, so a name goes about 1.5 periods after its last use. */
    static Duration period(Duration deleteIdleAfter) {
        Duration half = deleteIdleAfter.dividedBy(2);
        if (half.compareTo(SHORTEST_PERIOD) < 0) {
            return SHORTEST_PERIOD;
        }
        return half.compareTo(LONGEST_PERIOD) > 0 ? LONGEST_PERIOD : half;
    }

    /** Starts a name's idle time afresh: this process just granted or released it. */
    void forget(String name) {
        seen.remove(name);
    }

    /**
     * Looks at every name once and deletes those idle for long enough.
     *
     * @return how many names' znodes were deleted
     */
    int sweep() throws Exception {
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.root());
        }
        catch (KeeperException.NoNodeException ex) {
            seen.clear();
            return 0;
        }
        seen.keySet().retainAll(names);
        // One read per name, all sent before any answer is awaited: a sweep of many names costs about one round
        // trip of latency, not one per name. Reading the clock before the reads can only make names look less idle.
        long now = nanoTime.getAsLong();
        Map<String, CompletableFuture<Stat>> stats = new LinkedHashMap<>();
        for (String name : names) {
            stats.put(name, stat(name));
        }
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
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

    private CompletableFuture<Stat> stat(String name) throws Exception {
        CompletableFuture<Stat> stat = new CompletableFuture<>();
        client.checkExists().inBackground((c, event) -> {
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
        if (stat == null || stat.getNumChildren() > 0) {
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
        try {
            // Conditional on the version seen idle; ZooKeeper also refuses while a holder (a child) exists.
            client.delete().withVersion(stat.getVersion()).forPath(paths.counter(name));
            return true;
        }
        catch (KeeperException.BadVersionException | KeeperException.NotEmptyException
                | KeeperException.NoNodeException raced) {
            return false; // granted, or deleted by another instance, meanwhile
        }
    }

    private record Seen(int version, int childVersion, long since) {
    }
}
