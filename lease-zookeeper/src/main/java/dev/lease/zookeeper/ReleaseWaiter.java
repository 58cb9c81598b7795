package dev.lease.zookeeper;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/** Waits for a busy name's holder znode to change, woken by a watch rather than by polling. */
final class ReleaseWaiter {

    private final CuratorFramework client;
    private final LeasePaths paths;

    ReleaseWaiter(CuratorFramework client, LeasePaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /** Waits for the holder znode to change (a watch), returning at once when nobody holds the lease. */
    void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        if (!client.getZookeeperClient().isConnected()) {
            // A watch cannot be set now, and trying would block in Curator's retries: wait for the connection instead.
            client.blockUntilConnected((int) Math.max(1, maxWait.toMillis()), TimeUnit.MILLISECONDS);
            return;
        }
        String holder = paths.holder(name);
        CountDownLatch changed = new CountDownLatch(1);
        Watcher watcher = event -> changed.countDown();
        Stat stat;
        try {
            stat = client.checkExists().usingWatcher(watcher).forPath(holder);
        }
        catch (InterruptedException ex) {
            throw ex;
        }
        catch (Exception ex) {
            // The next grant attempt will fail or succeed on its own; the engine backs off between attempts.
            return;
        }
        try {
            if (stat != null) {
                changed.await(Math.max(1, maxWait.toMillis()), TimeUnit.MILLISECONDS);
            }
        }
        finally {
            if (changed.getCount() > 0) {
                Watches.forget(client, watcher, holder);
            }
        }
    }
}
