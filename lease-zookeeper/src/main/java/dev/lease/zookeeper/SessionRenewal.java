package dev.lease.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * Confirms grants with one round trip on the session, whatever their number. A holder znode is ephemeral, so it
 * lives as long as the session that created it unless someone deletes it; a grant is therefore still ours when
 * <ul>
 *   <li>its session is the client's current session (a new session means its holders are gone),</li>
 *   <li>the connection was not {@code SUSPENDED} or {@code LOST} since the grant (reported lost at that moment by
 *       {@link ConnectionWatch}),</li>
 *   <li>and its holder was not deleted: the first renewal of a grant sets a watch on its holder with an
 *       {@code exists} (which also checks the holder is the one this grant created), and the watch reports a later
 *       deletion at once.</li>
 * </ul>
 * A {@code sync} on the lease root, answered on the session, then proves the session alive now. ZooKeeper sends a
 * session's watch events and responses in order, and the {@code sync} makes the server catch up with the leader
 * first, so every deletion committed before this call was reported (and its grant marked lost) before the answer.
 * Grants whose holder is watched cost nothing more than that one {@code sync}.
 */
final class SessionRenewal {

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final LiveGrants live;
    /** How long to wait for the answers: past the session timeout the session itself may have ended. */
    private final Supplier<Duration> sessionTimeout;

    SessionRenewal(CuratorFramework client, LeasePaths paths, LiveGrants live, Supplier<Duration> sessionTimeout) {
        this.client = client;
        this.paths = paths;
        this.live = live;
        this.sessionTimeout = sessionTimeout;
    }

    /** @return those of {@code grants} that are no longer held */
    Set<ZkGrant> renewAll(Collection<ZkGrant> grants) throws Exception {
        Set<ZkGrant> lost = new HashSet<>();
        if (grants.isEmpty()) {
            return lost;
        }
        if (!client.getZookeeperClient().isConnected()) {
            lost.addAll(grants); // already reported lost when the connection was suspended
            return lost;
        }
        long session = sessionId();
        List<CompletableFuture<?>> answers = new ArrayList<>();
        for (ZkGrant g : grants) {
            Holding holding = live.get(g);
            if (holding == null || holding.lost() || g.sessionId() != session) {
                lost.add(g);
            }
            else if (!holding.armed) {
                answers.add(watchHolder(g, holding));
            }
        }
        if (lost.size() == grants.size()) {
            return lost;
        }
        CompletableFuture<Void> synced = new CompletableFuture<>();
        client.sync().inBackground((c, event) -> completeSync(event, synced)).forPath(paths.root());
        answers.add(synced);
        awaitAnswers(answers, grants.size());
        boolean sameSession = sessionId() == session;
        for (ZkGrant g : grants) {
            Holding holding = live.get(g);
            if (!sameSession || holding == null || holding.lost()) {
                lost.add(g);
            }
        }
        return lost;
    }

    /**
     * Reports every live grant lost and removes the watches on their holders: once the backend stops listening, a
     * suspended connection would go unnoticed.
     */
    void loseAllAndUnwatch(String reason) {
        live.forEach((g, holding) -> {
            // Lost before the watch goes: its removal is an event of its own, which must find the grant lost already.
            holding.markLost(reason);
            Watcher watcher = holding.watcher;
            if (watcher != null) {
                Watches.forget(client, watcher, paths.holder(g.name()));
            }
        });
    }

    /** Sets the watch that reports a deletion of the grant's holder, and checks the holder is the grant's own. */
    private CompletableFuture<Void> watchHolder(ZkGrant g, Holding holding) throws Exception {
        CompletableFuture<Void> answered = new CompletableFuture<>();
        String holder = paths.holder(g.name());
        Watcher watcher = event -> holderChanged(g, holding, event);
        holding.watcher = watcher;
        client.checkExists().usingWatcher(watcher).inBackground((c, event) -> {
            try {
                Stat stat = event.getStat();
                if (event.getResultCode() == KeeperException.Code.OK.intValue() && stat != null
                        && stat.getCzxid() == g.zxid() && stat.getEphemeralOwner() == g.sessionId()) {
                    holding.armed = true;
                }
                else {
                    // The watch is of no use to a grant already lost, and would linger on a missing holder; removing
                    // it is a request of its own, which must not block this event thread.
                    client.runSafe(() -> Watches.forget(client, watcher, holder));
                    loseOnEventThread(holding, "its holder znode " + holder + " is gone or belongs to another grant ("
                            + KeeperException.Code.get(event.getResultCode()) + ")");
                }
            }
            finally {
                answered.complete(null);
            }
        }).forPath(holder);
        return answered;
    }

    private void holderChanged(ZkGrant g, Holding holding, WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None || live.get(g) != holding) {
            return; // connection state (handled by the connection state listener), or released by us
        }
        String holder = paths.holder(g.name());
        if (event.getType() == Watcher.Event.EventType.DataWatchRemoved) {
            loseOnEventThread(holding, "the watch on its holder znode " + holder
                    + " was removed while it was held: a deletion of the holder would go unnoticed");
            return;
        }
        loseOnEventThread(holding, "its holder znode " + holder + " was deleted by someone else ("
                + event.getType() + ")");
    }

    /**
     * Marks the grant lost at once, so that a renewal whose answer follows on this thread reports it, but tells the
     * listener on another thread: a listener that blocks (it may run the application's loss listeners) must not hold
     * up the ZooKeeper event thread, which every watch and answer of this client goes through.
     */
    private void loseOnEventThread(Holding holding, String reason) {
        if (!holding.lose(reason)) {
            return;
        }
        try {
            client.runSafe(() -> holding.listener().leaseLost(reason));
        }
        catch (RuntimeException closed) {
            holding.listener().leaseLost(reason); // the client is closing: tell the listener here rather than never
        }
    }

    private static void completeSync(CuratorEvent event, CompletableFuture<Void> synced) {
        if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
            synced.complete(null);
        }
        else {
            synced.completeExceptionally(KeeperException.create(KeeperException.Code.get(event.getResultCode())));
        }
    }

    /** Waits for the answers at most a session timeout: past it the session itself may have ended. */
    private void awaitAnswers(List<CompletableFuture<?>> answers, int grants) throws Exception {
        Duration limit = sessionTimeout.get();
        try {
            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(limit.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (TimeoutException ex) {
            throw new TimeoutException("ZooKeeper did not confirm the session of " + grants + " lease(s) within "
                    + limit.toMillis() + " ms");
        }
        catch (ExecutionException ex) {
            throw ex.getCause() instanceof Exception cause ? cause : ex;
        }
    }

    private long sessionId() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }
}
