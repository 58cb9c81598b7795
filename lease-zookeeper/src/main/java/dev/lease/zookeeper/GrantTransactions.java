package dev.lease.zookeeper;

import java.util.List;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Grants a name with one {@code multi}: create the ephemeral holder and {@code setData} on the name's counter, whose
 * new version (or the {@code multi}'s zxid, as the {@link TokenScheme} says) is the token. Creates the counter on a
 * name's first grant, and removes an orphan holder of ours found in the way. The caller holds the name's slot
 * ({@link NameSlots}).
 */
final class GrantTransactions {

    private static final Log log = LogFactory.getLog(GrantTransactions.class);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final byte[] instanceId;
    private final OurHolders holders;
    private final TokenScheme tokens;
    private final Releases releases;
    /** Told of every name granted, so that its idle time starts afresh. */
    private final Consumer<String> used;

    GrantTransactions(CuratorFramework client, LeasePaths paths, byte[] instanceId, OurHolders holders,
            TokenScheme tokens, Releases releases, Consumer<String> used) {
        this.client = client;
        this.paths = paths;
        this.instanceId = instanceId;
        this.holders = holders;
        this.tokens = tokens;
        this.releases = releases;
        this.used = used;
    }

    /**
     * Grants the name if nobody holds it.
     *
     * @return the grant, or null when the lease is busy (or looked busy for a moment: the engine tries again)
     */
    ZkGrant grantOrReclaim(String name) throws Exception {
        try {
            return grant(name);
        }
        catch (KeeperException.NoNodeException ex) {
            createCounter(name);
        }
        catch (KeeperException.NodeExistsException ex) {
            return removeOrphanAndRegrant(name);
        }
        try {
            return grant(name);
        }
        catch (KeeperException.NodeExistsException ex) {
            return removeOrphanAndRegrant(name);
        }
        catch (KeeperException.NoNodeException ex) {
            return null; // deleted again in between: a spurious "busy", the engine tries again
        }
    }

    /**
     * One grant {@code multi}. Its holder is known by its creation zxid (the {@code multi}'s, from the store's answer)
     * and by the session that committed it ({@code OurHolders.ownerOf}), never by a session read before the request
     * alone: Curator retries the {@code multi} on a new session after an expiry. A grant whose session changed under
     * it (committed by another session than the one it was sent on, or by one that ended since) is of unknown
     * standing: the caller may have given up on it, and its holder would block the name for as long as that session
     * lives. Its holder is removed (found by its creation zxid and our instance id) and the request fails.
     */
    private ZkGrant grant(String name) throws Exception {
        long sentOn = sessionId();
        List<CuratorTransactionResult> results = client.transaction().forOperations(
                client.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(paths.holder(name), instanceId),
                client.transactionOp().setData().forPath(paths.counter(name), LeasePaths.NO_DATA));
        Stat counter = result(results, OperationType.SET_DATA, name).getResultStat();
        int version = counter.getVersion();
        // Every operation of a multi carries the multi's zxid: it is also the holder's czxid.
        long zxid = counter.getMzxid();
        long now = sessionId();
        long owner = OurHolders.ownerOf(result(results, OperationType.CREATE, name).getResultStat(), sentOn, now);
        ZkGrant grant = new ZkGrant(name, tokens.token(version, zxid), version, owner, zxid);
        if (owner == 0 || owner != sentOn || owner != now) {
            throw sessionChanged(grant, sentOn, now);
        }
        if (version <= 0) {
            // ZooKeeper versions are ints; past Integer.MAX_VALUE they wrap and would hand out a smaller token (and
            // a release could no longer check it).
            releases.release(grant);
            throw new IllegalStateException("Lease '" + name + "': the version of " + paths.counter(name)
                    + " wrapped around (" + version + "), so it can no longer issue increasing fencing tokens. "
                    + "Use a new lease name (and carry the resources' fences over to it).");
        }
        try {
            tokens.admit(grant, counter);
        }
        catch (Exception refused) {
            releases.release(grant); // the token was never handed out
            throw refused;
        }
        used.accept(name);
        return grant;
    }

    private static CuratorTransactionResult result(List<CuratorTransactionResult> results, OperationType type,
            String name) {
        return results.stream().filter(r -> r.getType() == type).findFirst().orElseThrow(
                () -> new IllegalStateException("ZooKeeper returned no " + type + " result for lease '" + name + "'"));
    }

    private IllegalStateException sessionChanged(ZkGrant grant, long sentOn, long now) {
        String removed;
        try {
            removed = holders.delete(grant.name(), grant.version(), grant.zxid()) ? "its holder was removed"
                    : "its holder is gone";
        }
        catch (Exception ex) {
            // The engine abandons the failed request, which removes the holder as an orphan.
            removed = "its holder could not be removed yet (" + ex + ")";
        }
        String message = "Lease '" + grant.name() + "': the ZooKeeper session changed while the grant request was in "
                + "flight (sent on session 0x" + Long.toHexString(sentOn) + ", answered on session 0x"
                + Long.toHexString(now) + "), so its grant (zxid 0x" + Long.toHexString(grant.zxid())
                + ", token " + grant.value() + ") is treated as unknown: " + removed;
        log.info(message);
        return new IllegalStateException(message);
    }

    private void createCounter(String name) throws Exception {
        try {
            tokens.createCounter(name);
        }
        catch (KeeperException.NodeExistsException raced) {
            // Another client created it first: fine, it is the same counter.
        }
    }

    /**
     * A grant whose response was lost (connection loss after the commit, then Curator's retry hit NodeExists)
     * leaves a holder of our session that nobody here knows about; left alone it would block the name until the
     * session ends. It is removed (see {@link Releases#removeOrphan}) and the name granted afresh, with a new token.
     * Adopting it instead would race with a release of that same grant still in flight and could leave a holder
     * without a znode behind it.
     */
    private ZkGrant removeOrphanAndRegrant(String name) throws Exception {
        if (!releases.removeOrphan(name, "a grant whose response was lost; granting afresh")) {
            return null;
        }
        try {
            return grant(name);
        }
        catch (KeeperException.NoNodeException | KeeperException.NodeExistsException raced) {
            return null; // someone removed the counter or granted the name meanwhile: a spurious "busy", the engine retries
        }
    }

    private long sessionId() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }
}
