package dev.lease.zookeeper;


import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * What a {@link ZooKeeperTokenSource} decides: which number of a grant's {@code multi} is its token, how a name's
 * counter znode is created, what a grant must check or mark before its token leaves the backend, and whether idle
 * names' znodes may be deleted. One implementation per source: {@link VersionTokens}, {@link ZxidTokens}.
 */
interface TokenScheme {

    static TokenScheme of(ZooKeeperTokenSource source, CuratorFramework client, LeasePaths paths) {
        return switch (source) {
            case VERSION -> new VersionTokens(client, paths);
            case ZXID -> new ZxidTokens(client, paths);
        };
    }

    /**
     * The token of a grant, from the counter's stat after its {@code multi}.
     *
     * @param version the counter's new version
     * @param zxid the zxid of the {@code multi}
     */
    long token(int version, long zxid);

    /**
     * Whether this backend never deletes a name's counter znode (so only an operator can). Then a counter still at a
     * grant's version proves no one was granted since, and a release whose grant is not in doubt needs no read of the
     * holder first ({@link Releases}).
     */
    boolean keepsCounters();

    /**
     * Creates the missing counter znode {@code {root}/{name}} (and the root if it is missing too).
     *
     * @throws KeeperException.NodeExistsException when someone else created it first
     */
    void createCounter(String name) throws Exception;

    /**
     * Checks, or marks, the name after its grant's {@code multi} and before the grant's token leaves the backend.
     *
     * @param counter the counter's stat after the {@code multi}
     * @throws Exception to refuse the grant; the caller then releases it, as its token was never handed out
     */
    void admit(ZkGrant grant, Stat counter) throws Exception;

    /**
     * Whether a zxid grant marked the name. The holder is one child; a second one is the zxid marker. The marker is in
     * place before any zxid token of the name is handed out, and every grant sees it in the stat of its own
     * {@code multi}, so no extra round trip.
     */
    static boolean zxidMarked(Stat counter) {
        return counter.getNumChildren() > 1;
    }

    static void createRoot(CuratorFramework client, LeasePaths paths) throws Exception {
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT)
                    .forPath(paths.root(), LeasePaths.NO_DATA);
        }
        catch (KeeperException.NodeExistsException raced) {
            // Created by someone else meanwhile.
        }
    }
}
