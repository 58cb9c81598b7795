package dev.lease.zookeeper;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Removes the holder znodes this backend no longer wants: those of released grants, and those that failed or
 * abandoned grant requests may have left. A release is one {@code multi} (check the counter is still at the grant's
 * version, delete the holder) unless the grant is in doubt, and then the holder is read first to know it is the
 * grant's own ({@link OurHolders#delete}). While disconnected nothing is sent (the caller is usually a holder being
 * told its lease is lost, and must not block): the removal is kept and retried when the connection is back
 * ({@link #retryPending}), because a holder znode of a live session would otherwise block the name until that session
 * ends.
 */
final class Releases {

    private static final Log log = LogFactory.getLog(Releases.class);

    private final CuratorFramework client;
    private final OurHolders holders;
    private final LiveGrants live;
    private final NameSlots slots;
    /** Told of every name released, so that its idle time starts afresh. */
    private final Consumer<String> used;
    /** Whether counters are never deleted here, so that the version alone identifies a grant not in doubt. */
    private final boolean keepsCounters;
    private final Set<ZkGrant> pendingReleases = ConcurrentHashMap.newKeySet();
    /** Names whose abandoned grant request could not be cleaned up while disconnected (see {@link #abandon}). */
    private final Set<String> pendingAbandons = ConcurrentHashMap.newKeySet();

    Releases(CuratorFramework client, OurHolders holders, LiveGrants live, NameSlots slots, Consumer<String> used,
            boolean keepsCounters) {
        this.client = client;
        this.keepsCounters = keepsCounters;
        this.holders = holders;
        this.live = live;
        this.slots = slots;
        this.used = used;
    }

    /** Releases at once when connected, and otherwise when the connection is back. */
    void release(ZkGrant g) throws Exception {
        Holding holding = live.remove(g);
        used.accept(g.name());
        if (!client.getZookeeperClient().isConnected()) {
            pendingReleases.add(g);
            return;
        }
        try {
            releaseNow(g, inDoubt(g, holding));
        }
        catch (KeeperException.ConnectionLossException | KeeperException.SessionMovedException ex) {
            pendingReleases.add(g);
        }
    }

    /**
     * Whether the grant's holder may be gone without our knowing, and the name re-created and granted up to our version
     * since. Not while the grant was live here, never reported lost (its connection was never suspended, its holder's
     * watch never fired) and its session is still the client's: its holder, our session's ephemeral child of the
     * counter, then still exists unless an operator deleted it before its first renewal set the watch, so the counter
     * cannot have been deleted and a counter at our version proves no one was granted since. Otherwise (a session that
     * changed or ended, a grant lost or never registered, counters that idle-name deletion re-creates) it is.
     */
    private boolean inDoubt(ZkGrant g, Holding holding) throws Exception {
        return !keepsCounters || holding == null || holding.lost()
                || g.sessionId() != client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    /**
     * Deletes the holder our grant created. In doubt, it is identified by what the store says first (our instance id,
     * and the grant's zxid as its creation zxid), whichever session owns it now: a holder of an ended session is gone,
     * and a successor's holder, even one at our version after the name was re-created, has another creation zxid. See
     * {@code OurHolders} for why the version-checked delete that follows the read cannot meet a successor's holder.
     */
    private void releaseNow(ZkGrant g, boolean inDoubt) throws Exception {
        boolean deleted = inDoubt ? holders.delete(g.name(), g.version(), g.zxid())
                : holders.deleteAtVersion(g.name(), g.version());
        if (!deleted) {
            log.debug("Lease '" + g.name() + "' (token " + g.value() + ") has no holder of its own left (its session "
                    + "ended, or someone else holds it now); nothing to release");
        }
    }

    /**
     * Removes the holder znode that a failed request may have committed (Curator queues a request before it waits, so
     * an interrupted or timed-out grant can still be committed, and retries it on a new session after an expiry): a
     * holder carrying this backend's instance id that no live grant claims, whichever session owns it. ZooKeeper
     * handles one session's requests in the order they were sent, so the reads here come after the abandoned
     * {@code multi}, whatever became of it, unless Curator retries it later on a new session: that retry finds a
     * session other than the one it was sent on and removes its own holder itself ({@link GrantTransactions}).
     *
     * <p>While another grant attempt for the name runs here, it is left to that attempt: its {@code multi} was sent
     * after the abandoned one, so it meets the holder and removes it as an orphan before granting afresh (and if it
     * fails too, its own abandon comes). While disconnected, the removal is kept and retried when the same session
     * reconnects, as releases are; if the session ends instead, the server deletes the holder with it.
     */
    void abandon(String name) throws Exception {
        if (!client.getZookeeperClient().isConnected()) {
            pendingAbandons.add(name);
            return;
        }
        CountDownLatch slot = slots.tryClaim(name);
        if (slot == null) {
            return;
        }
        try {
            removeOrphan(name, "a grant request that failed or was interrupted");
        }
        catch (KeeperException.ConnectionLossException | KeeperException.SessionMovedException ex) {
            pendingAbandons.add(name);
        }
        finally {
            slots.free(name, slot);
        }
    }

    /**
     * Deletes the holder znode of {@code name} if it is an orphan: ours, and claimed by no live grant (see
     * {@code OurHolders.removeOrphan}). The caller holds the name's slot, so no grant of ours can be registered
     * meanwhile.
     */
    boolean removeOrphan(String name, String leftBy) throws Exception {
        return holders.removeOrphan(name, live.claimsOf(name), leftBy);
    }

    boolean hasPending() {
        return !pendingReleases.isEmpty() || !pendingAbandons.isEmpty();
    }

    /** Sends the releases and removals kept while disconnected; runs once the connection is back. */
    void retryPending() {
        for (String name : pendingAbandons) {
            if (!pendingAbandons.remove(name)) {
                continue;
            }
            try {
                abandon(name);
            }
            catch (Exception ex) {
                log.warn("Could not remove the holder znode a failed grant request for lease '" + name + "' may have "
                        + "left, after reconnecting; it goes away with this client's session: " + ex);
            }
        }
        for (ZkGrant g : pendingReleases) {
            if (!pendingReleases.remove(g)) {
                continue;
            }
            try {
                releaseNow(g, true); // the connection dropped since: in doubt
            }
            catch (Exception ex) {
                log.warn("Could not release lease '" + g.name() + "' (token " + g.value() + ") after reconnecting; "
                        + "its holder znode goes away with this client's session: " + ex);
            }
        }
    }
}
