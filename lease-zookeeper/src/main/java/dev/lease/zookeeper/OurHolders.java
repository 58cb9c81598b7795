package dev.lease.zookeeper;

import java.util.Arrays;
import java.util.function.LongPredicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Tells the holder znodes of one backend apart from everyone else's by what the store says about them, never by a
 * session id read before a request (Curator retries a request on a new session after an expiry): a holder is ours
 * when it carries our instance id, and it is a given grant's when its creation zxid is the zxid of that grant's
 * {@code multi}. Removes them, and only them.
 *
 * <p>Every removal reads the holder, then deletes it in a {@code multi} that checks the name's counter is still at
 * the version it had: a holder created after the read moved the counter on (every grant bumps it in the
 * {@code multi} that creates the holder), so only the holder seen can go. The counter could only return to that
 * version if it were deleted and re-created, which it cannot be while the holder seen, its child, exists; and a
 * re-created counter needs as many grants again to reach it.
 */
final class OurHolders {

    private static final Log log = LogFactory.getLog(OurHolders.class);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final byte[] instanceId;

    OurHolders(CuratorFramework client, LeasePaths paths, byte[] instanceId) {
        this.client = client;
        this.paths = paths;
        this.instanceId = instanceId.clone();
    }

    /**
     * The session that owns the holder a grant's {@code multi} created, without a round trip of its own. The create's
     * stat says it outright when the client asked for one (a {@code create2}; Curator sends a plain create for an
     * ephemeral znode, which returns none). Otherwise the session is read before the request and after its answer:
     * Curator retries a request on whichever handle is current at the time, a handle keeps its session for life and
     * each new session gets a new handle, so when both reads see one session, every attempt, the one that committed
     * included, ran on it. When they differ the owner is unknown. The first renewal of a grant checks the holder's
     * owner and creation zxid against the store anyway ({@code exists}).
     *
     * @param created the stat the create of the {@code multi} returned, or null
     * @param sentOn the client's session read before the request was sent
     * @param answeredOn the client's session read after its answer came
     * @return the owning session, or 0 when it is unknown
     */
    static long ownerOf(Stat created, long sentOn, long answeredOn) {
        if (created != null) {
            return created.getEphemeralOwner();
        }
        return sentOn == answeredOn ? sentOn : 0;
    }

    /**
     * Deletes the holder that the grant with counter version {@code version} and zxid {@code zxid} created, if it is
     * still there, whichever session owns it.
     *
     * @return whether it was deleted; false when it is gone or someone else's holder is there now
     */
    boolean delete(String name, int version, long zxid) throws Exception {
        try {
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(paths.holder(name));
            if (stat.getCzxid() != zxid || !isOurs(data)) {
                return false;
            }
        }
        catch (KeeperException.NoNodeException gone) {
            return false; // its session ended, or it was released or removed
        }
        return deleteAtVersion(name, version);
    }

    /**
     * Deletes the holder of {@code name} in a {@code multi} that checks the counter is still at {@code version}, without
     * reading it first: only for a holder known to be there unless someone else deleted it (see {@code Releases}).
     *
     * @return whether it was deleted; false when it is gone or the counter moved on
     */
    boolean deleteAtVersion(String name, int version) throws Exception {
        try {
            client.transaction().forOperations(
                    client.transactionOp().check().withVersion(version).forPath(paths.counter(name)),
                    client.transactionOp().delete().forPath(paths.holder(name)));
            return true;
        }
        catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
            return false; // its session ended, or it was released, removed or replaced meanwhile
        }
    }

    /**
     * Deletes the holder of {@code name} if it is an orphan: it carries our instance id and no live grant claims it
     * ({@code claimed} is asked with its creation zxid), whichever session owns it. The caller keeps any grant of
     * ours for the name from being made meanwhile. A holder that is not ours costs one read. Otherwise the counter is
     * read before the holder is read again, and its version checked in the delete: any holder created after that read
     * moved the counter on, so only the holder seen here can go.
     *
     * @return whether the holder was deleted
     */
    boolean removeOrphan(String name, LongPredicate claimed, String leftBy) throws Exception {
        String holder = paths.holder(name);
        try {
            // Most holders met here are someone else's (a busy name): one read tells, before the reads that must come
            // in the order below to delete safely.
            Stat seen = new Stat();
            if (!isOurs(client.getData().storingStatIn(seen).forPath(holder)) || claimed.test(seen.getCzxid())) {
                return false;
            }
            Stat counter = client.checkExists().forPath(paths.counter(name));
            if (counter == null) {
                return false;
            }
            Stat holderStat = new Stat();
            byte[] data = client.getData().storingStatIn(holderStat).forPath(holder);
            if (!isOurs(data) || claimed.test(holderStat.getCzxid())) {
                return false;
            }
            client.transaction().forOperations(
                    client.transactionOp().check().withVersion(counter.getVersion()).forPath(paths.counter(name)),
                    client.transactionOp().delete().withVersion(holderStat.getVersion()).forPath(holder));
            log.info("Lease '" + name + "': removed holder znode " + holder + " (version " + counter.getVersion()
                    + ", zxid " + holderStat.getCzxid() + ", session 0x"
                    + Long.toHexString(holderStat.getEphemeralOwner()) + ") left by " + leftBy);
            return true;
        }
        catch (KeeperException.NoNodeException | KeeperException.BadVersionException raced) {
            return false; // no holder, or someone released, removed or granted it meanwhile
        }
    }

    private boolean isOurs(byte[] data) {
        return Arrays.equals(data, instanceId);
    }
}
