package dev.lease.benchmarks;

import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The floor of the ZooKeeper rows: the requests a fenced lock needs and nothing else, in plain Curator. A grant is one
 * {@code multi} (create the ephemeral holder, {@code setData} on the name's persistent counter, whose new version is
 * the token); a release is one {@code multi} (check the counter's version, delete the holder); a waiter whose grant
 * found the holder sets a watch on it with {@code exists} and tries again when it changes (every waiter, each with its
 * own watch). No renewal, no orphan clean-up, no session checks, no engine: what a fenced handover costs at the least.
 */
final class ZooKeeperFloor {

    private static final String ROOT = "/floor";
    private static final byte[] NO_DATA = new byte[0];

    private ZooKeeperFloor() {
    }

    /** One application instance's locks on {@code client}. */
    static Locker locker(CuratorFramework client) {
        return name -> {
            String counter = ROOT + "/" + name;
            String holder = counter + "/holder";
            while (true) {
                try {
                    Stat granted = client.transaction().forOperations(
                            client.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(holder, NO_DATA),
                            client.transactionOp().setData().forPath(counter, NO_DATA)).stream()
                            .filter(r -> r.getType() == OperationType.SET_DATA).findFirst()
                            .map(CuratorTransactionResult::getResultStat).orElseThrow();
                    int version = granted.getVersion();
                    return () -> client.transaction().forOperations(
                            client.transactionOp().check().withVersion(version).forPath(counter),
                            client.transactionOp().delete().forPath(holder));
                }
                catch (KeeperException.NoNodeException firstUse) {
                    try {
                        client.create().creatingParentsIfNeeded().forPath(counter, NO_DATA);
                    }
                    catch (KeeperException.NodeExistsException raced) {
                        // Created by the other instance.
                    }
                }
                catch (KeeperException.NodeExistsException busy) {
                    CountDownLatch changed = new CountDownLatch(1);
                    if (client.checkExists().usingWatcher((Watcher) e -> changed.countDown())
                            .forPath(holder) != null) {
                        changed.await();
                    }
                }
            }
        };
    }
}
