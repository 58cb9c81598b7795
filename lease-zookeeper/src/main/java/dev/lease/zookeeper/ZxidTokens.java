package dev.lease.zookeeper;


import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Tokens from {@link ZooKeeperTokenSource#ZXID}: the zxid of the granting {@code multi}, which rises ensemble-wide,
 * also across deletion and re-creation of a name's znode, so idle names may be deleted. Every name granted this way is
 * marked ({@link LeasePaths#zxidMarker}) before its first zxid token leaves, so that version grants refuse it.
 */
final class ZxidTokens implements TokenScheme {

    private final CuratorFramework client;
    private final LeasePaths paths;

    ZxidTokens(CuratorFramework client, LeasePaths paths) {
        this.client = client;
        this.paths = paths;
    }

    @Override
    public long token(int version, long zxid) {
        return zxid;
    }

    /** Idle names' counters may be deleted and re-created, reaching a released grant's version again. */
    @Override
    public boolean keepsCounters() {
        return false;
    }

    /** Marks the name on its first zxid grant (a name created here is created marked). */
    @Override
    public void admit(ZkGrant grant, Stat counter) throws Exception {
        if (TokenScheme.zxidMarked(counter)) {
            return;
        }
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(paths.zxidMarker(grant.name()), LeasePaths.NO_DATA);
        }
        catch (KeeperException.NodeExistsException marked) {
            // Another zxid instance marked it first.
        }
    }

    /** Created marked, so that the first grant of a new name costs no extra write. */
    @Override
    public void createCounter(String name) throws Exception {
        try {
            createMarked(name);
        }
        catch (KeeperException.NoNodeException ex) {
            TokenScheme.createRoot(client, paths);
            createMarked(name);
        }
    }

    private void createMarked(String name) throws Exception {
        client.transaction().forOperations(
                client.transactionOp().create().withMode(CreateMode.PERSISTENT)
                        .forPath(paths.counter(name), LeasePaths.NO_DATA),
                client.transactionOp().create().withMode(CreateMode.PERSISTENT)
                        .forPath(paths.zxidMarker(name), LeasePaths.NO_DATA));
    }
}
