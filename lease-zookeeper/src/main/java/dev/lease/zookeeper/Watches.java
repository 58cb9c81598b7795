package dev.lease.zookeeper;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;

/** Removes watches this backend no longer needs, so that none lingers on a znode for the rest of the session. */
final class Watches {

    private static final Log log = LogFactory.getLog(Watches.class);

    private Watches() {
    }

    /** Removes the watch locally, without a round trip, and quietly when it is gone already. */
    static void forget(CuratorFramework client, Watcher watcher, String path) {
        try {
            client.watchers().remove(watcher).locally().quietly().forPath(path);
        }
        catch (Exception ex) {
            log.debug("Could not remove the watch on " + path + ": " + ex);
        }
    }
}
