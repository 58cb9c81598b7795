package dev.lease.zookeeper;


import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Tokens from {@link ZooKeeperTokenSource#VERSION}: the counter znode's version after the grant, strictly increasing
 * per name for as long as that znode exists. So the znode is never deleted, and a grant is refused on a name that zxid
 * grants used (their tokens are far larger: the resources would refuse this holder and accept late writes of a paused
 * zxid holder).
 */
final class VersionTokens implements TokenScheme {

    private final CuratorFramework client;
    private final LeasePaths paths;

    VersionTokens(CuratorFramework client, LeasePaths paths) {
        this.client = client;
        this.paths = paths;
    }

    @Override
    public long token(int version, long zxid) {
        return version;
    }

    /** Deleting a counter would send its tokens back, so idle names are refused with version tokens. */
    @Override
    public boolean keepsCounters() {
        return true;
    }

    @Override
    public void admit(ZkGrant grant, Stat counter) {
        if (TokenScheme.zxidMarked(counter)) {
            throw mixedTokens(grant.name(), paths.zxidMarker(grant.name()) + " says zxid tokens were issued for it");
        }
    }

    /**
     * A name's znode may be missing because an instance with {@code delete-idle-after} deleted it after zxid grants;
     * re-creating it at version 0 would send tokens back. Such an instance marks the root before it deletes anything,
     * and the create is conditional on the root's version seen unmarked here, so a marking in between fails it.
     */
    @Override
    public void createCounter(String name) throws Exception {
        Stat root = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(root).forPath(paths.root());
        }
        catch (KeeperException.NoNodeException ex) {
            TokenScheme.createRoot(client, paths);
            data = client.getData().storingStatIn(root).forPath(paths.root());
        }
        if (IdleNameSweeper.marksRoot(data)) {
            throw mixedTokens(name, "its znode " + paths.counter(name) + " is missing and lease.zookeeper.root '"
                    + paths.root() + "' is marked by an instance that deletes idle names (so the name may have had zxid "
                    + "tokens before its znode was deleted)");
        }
        try {
            client.transaction().forOperations(
                    client.transactionOp().check().withVersion(root.getVersion()).forPath(paths.root()),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT)
                            .forPath(paths.counter(name), LeasePaths.NO_DATA));
        }
        catch (KeeperException.BadVersionException marked) {
            // The root changed meanwhile: the grant finds no znode and reports busy, and the next attempt reads again.
        }
    }

    /**
     * A version-token grant on a name that zxid grants used: its version token is far below the zxid tokens the
     * resources have seen, so they would refuse it, and a late write of a paused zxid holder would be accepted.
     */
    private IllegalStateException mixedTokens(String name, String evidence) {
        return new IllegalStateException("Lease '" + name + "' refused: " + evidence + ", but this instance has "
                + "lease.zookeeper.token=version. Its version tokens would be smaller than the zxid tokens already "
                + "issued (lease.zookeeper.token=zxid), so fenced resources would refuse this holder and accept late "
                + "writes of an earlier one. All instances using a lease name (and every instance under "
                + "lease.zookeeper.root '" + paths.root() + "' when one sets lease.zookeeper.delete-idle-after) must "
                + "use lease.zookeeper.token=zxid: set it here too. Switch from version to zxid with all instances "
                + "stopped, and never switch back.");
    }
}
