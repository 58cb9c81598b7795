package dev.lease.zookeeper;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;

import dev.lease.spi.LossListener;

/**
 * The lease lives as long as the client's ZooKeeper session, and a {@code SUSPENDED} or {@code LOST} connection means
 * every live grant is lost now, as Curator advises for locks: the session may expire at any moment and hand the lease
 * to someone else. Listens to the client's connection state from {@link #start()} to {@link #close()}, reports those
 * losses, sends the releases kept while disconnected once the connection is back, and judges health from the state.
 */
final class ConnectionWatch {

    private static final Log log = LogFactory.getLog(ConnectionWatch.class);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final LiveGrants live;
    private final Releases releases;
    private final ConnectionStateListener listener = (c, state) -> changed(state);
    /** The last connection state Curator reported, or null before the first report (the client may have connected
     *  before this backend was created). */
    private volatile ConnectionState lastState;

    ConnectionWatch(CuratorFramework client, LeasePaths paths, LiveGrants live, Releases releases) {
        this.client = client;
        this.paths = paths;
        this.live = live;
        this.releases = releases;
    }

    void start() {
        client.getConnectionStateListenable().addListener(listener);
    }

    void close() {
        client.getConnectionStateListenable().removeListener(listener);
    }

    /**
     * Sends nothing while disconnected: Curator would block in connection timeouts and retries far past the caller's
     * deadline, and a request queued now could be committed after the caller gave up on it.
     */
    void awaitConnected(Duration timeout, String name) throws Exception {
        if (client.getZookeeperClient().isConnected()) {
            return;
        }
        if (!client.blockUntilConnected((int) Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("ZooKeeper is unreachable: not connected within " + timeout.toMillis()
                    + " ms, so no grant request for lease '" + name + "' was sent");
        }
    }

    /** Makes a new grant live, lost at once if the connection dropped before it was registered. */
    void register(ZkGrant grant, LossListener onLoss) {
        Holding holding = live.register(grant, onLoss);
        if (!client.getZookeeperClient().isConnected()) {
            // The connection dropped between the commit and the registration: the listener did not see us.
            holding.markLost("the ZooKeeper connection dropped right after the grant");
        }
    }

    private void changed(ConnectionState state) {
        lastState = state;
        if (state == ConnectionState.RECONNECTED) {
            // Same session: our holders survived and must go. New session: they are normally gone with the old one;
            // the retry deletes any that are left (identified by instance id and creation zxid, not by session).
            if (releases.hasPending()) {
                client.runSafe(releases::retryPending);
            }
            return;
        }
        if (state != ConnectionState.SUSPENDED && state != ConnectionState.LOST) {
            return;
        }
        if (!live.isEmpty()) {
            log.warn("ZooKeeper connection " + state + ": reporting " + live.size() + " lease(s) lost now");
        }
        live.loseAll("the ZooKeeper connection is " + state + " (a suspended session may expire at any moment "
                + "and hand the lease to someone else)");
    }

    /**
     * The health {@link ZooKeeperLeaseBackend#checkHealth} reports, judged from the state without a round trip.
     *
     * @throws IllegalStateException when the client is not started, closed, or not connected
     */
    Map<String, Object> health() {
        String connectString = client.getZookeeperClient().getCurrentConnectionString();
        CuratorFrameworkState clientState = client.getState();
        if (clientState != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException("The Curator client of " + connectString + " is " + clientState
                    + " (not started, or closed): no lease can be granted or renewed");
        }
        ConnectionState seen = lastState;
        boolean connected = client.getZookeeperClient().isConnected();
        if (!connected || seen == ConnectionState.SUSPENDED || seen == ConnectionState.LOST
                || seen == ConnectionState.READ_ONLY) {
            // Curator reports the state a little after the client sees it: the client's flag is the earlier signal.
            String state = seen != null && seen != ConnectionState.CONNECTED && seen != ConnectionState.RECONNECTED
                    ? seen.name() : "DISCONNECTED";
            throw new IllegalStateException("The ZooKeeper connection to " + connectString + " is " + state
                    + (seen == ConnectionState.READ_ONLY ? " (a read-only server cannot grant leases)"
                            : ": no lease can be granted or renewed, and leases held here were reported lost"));
        }
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("state", seen == null ? ConnectionState.CONNECTED.name() : seen.name());
        details.put("connectString", connectString);
        details.put("root", paths.root());
        String namespace = client.getNamespace();
        if (namespace != null && !namespace.isEmpty()) {
            details.put("namespace", namespace);
        }
        return details;
    }
}
