package dev.lease.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LossListener;

/**
 * Leases in ZooKeeper, fenced by the version of a persistent znode per name, or by the zxid of the granting write.
 *
 * <p>A grant is one {@code multi}: create the ephemeral {@code {root}/{name}/holder} and {@code setData} on the
 * persistent {@code {root}/{name}}. With {@link ZooKeeperTokenSource#VERSION} (the default) the token is that znode's
 * new version, which only ever grows, so tokens strictly increase per name for as long as nobody deletes
 * {@code {root}/{name}} (the library then never does). With {@link ZooKeeperTokenSource#ZXID} the token is the zxid
 * of the {@code multi}, which rises ensemble-wide, also across deletion and re-creation of {@code {root}/{name}}, so
 * the znodes of idle names may be deleted ({@code deleteIdleAfter}). A release reads the holder, and if it is the one
 * our grant created (our instance id, the grant's zxid as its creation zxid) deletes it in a {@code multi} that checks
 * the version is still the one of our grant: a re-created counter can reach our version again. Holders are known by
 * what the store says of them, never by a session read before a request, which Curator may retry on a new session
 * ({@code OurHolders}). All instances using a name must use the same token source: see {@link ZooKeeperTokenSource}
 * for how mixing them is refused.
 *
 * <p>The lease lives as long as this client's ZooKeeper session; a {@code SUSPENDED} or {@code LOST} connection
 * reports every live grant lost at once, as Curator advises for locks. Renewal therefore only has to confirm that
 * the session is alive and that no holder was deleted by someone else: {@link #renewAll} costs one {@code sync} on
 * the session however many grants it renews (plus, once per grant, the {@code exists} that sets a watch on its
 * holder; a deletion of the holder then reports the grant lost at once).
 *
 * <p>The backend uses, and never closes, the {@link CuratorFramework} it is given; call {@link #close()} to stop
 * listening to its connection state.
 */
public final class ZooKeeperLeaseBackend implements LeaseBackend<ZooKeeperLeaseBackend.ZkGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "zookeeper";

    private static final Log log = LogFactory.getLog(ZooKeeperLeaseBackend.class);

    private static final byte[] NO_DATA = new byte[0];

    private static final BackendTraits TRAITS = BackendTraits.fenced().withRenewsInOneCall(true);

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final Duration configuredSessionTimeout;
    /** Written into our holder znodes so that an orphan left by a lost response can be told apart from a grant
     *  of another backend sharing the same client (and session). */
    private final byte[] instanceId = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
    private final OurHolders holders;
    private final ZooKeeperTokenSource tokenSource;
    private final Map<ZkGrant, Holding> live = new ConcurrentHashMap<>();
    /** Deletes idle names' znodes when {@code deleteIdleAfter} is set; null otherwise. */
    private final IdleNameSweeper idleNames;
    private final ScheduledExecutorService idleSweeps;
    /** The names with a grant attempt (or abandon) in flight here, each with a latch counted down when it ends. */
    private final Map<String, CountDownLatch> acquiring = new ConcurrentHashMap<>();
    private final Set<ZkGrant> pendingReleases = ConcurrentHashMap.newKeySet();
    /** Names whose abandoned grant request could not be cleaned up while disconnected (see {@link #abandon}). */
    private final Set<String> pendingAbandons = ConcurrentHashMap.newKeySet();
    private final ConnectionStateListener stateListener = (c, state) -> connectionStateChanged(state);
    /** The last connection state Curator reported, or null before the first report (the client may have connected
     *  before this backend was created). */
    private volatile ConnectionState lastState;

    /**
     * @param client a started client; its session is the life of every lease granted here
     * @param root absolute parent znode of the lease znodes, such as {@code /leases}
     * @param sessionTimeout the session timeout the client asked for, used as the longest ttl ({@link #traits()})
     *        until the server has negotiated one
     */
    public ZooKeeperLeaseBackend(CuratorFramework client, String root, Duration sessionTimeout) {
        this(client, root, sessionTimeout, ZooKeeperTokenSource.VERSION, null);
    }

    /**
     * @param client a started client; its session is the life of every lease granted here
     * @param root absolute parent znode of the lease znodes, such as {@code /leases}
     * @param sessionTimeout the session timeout the client asked for, used as the longest ttl ({@link #traits()})
     *        until the server has negotiated one
     * @param tokenSource where fencing tokens come from
     * @param deleteIdleAfter how long a name must be seen unheld and unchanged before its znode is deleted, or null
     *        to keep idle names for ever; only allowed with {@link ZooKeeperTokenSource#ZXID}
     * @throws IllegalArgumentException when {@code deleteIdleAfter} is set with {@link ZooKeeperTokenSource#VERSION}
     *         or is not positive
     */
    public ZooKeeperLeaseBackend(CuratorFramework client, String root, Duration sessionTimeout,
            ZooKeeperTokenSource tokenSource, Duration deleteIdleAfter) {
        this.client = Objects.requireNonNull(client, "client");
        this.paths = new LeasePaths(root);
        this.holders = new OurHolders(client, paths, instanceId);
        this.configuredSessionTimeout = Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        this.tokenSource = Objects.requireNonNull(tokenSource, "tokenSource");
        if (deleteIdleAfter != null) {
            IdleNameSweeper.validate(tokenSource, deleteIdleAfter);
            this.idleNames = new IdleNameSweeper(client, paths, deleteIdleAfter, System::nanoTime);
            this.idleSweeps = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "lease-zookeeper-idle-names");
                thread.setDaemon(true);
                return thread;
            });
            long period = IdleNameSweeper.period(deleteIdleAfter).toMillis();
            idleSweeps.scheduleWithFixedDelay(this::sweepIdleNames, period, period, TimeUnit.MILLISECONDS);
        }
        else {
            this.idleNames = null;
            this.idleSweeps = null;
        }
        client.getConnectionStateListenable().addListener(stateListener);
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Fenced. One {@link #renewAll} call confirms a whole batch: one {@code sync} on the session. The longest ttl is
     * the session timeout negotiated with the server, or the configured one before the first connection.
     */
    @Override
    public BackendTraits traits() {
        return TRAITS.withMaxTtl(sessionTimeout());
    }

    @Override
    public void validateName(String name) {
        paths.validateName(name);
    }

    /** The session timeout negotiated with the server, or the configured one before the first connection. */
    private Duration sessionTimeout() {
        int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 ? Duration.ofMillis(negotiated) : configuredSessionTimeout;
    }

    @Override
    public Optional<ZkGrant> tryAcquire(GrantRequest request) throws Exception {
        String name = request.name();
        paths.validateName(name);
        // One grant attempt (or abandon) per name at a time in this backend: a holder znode of ours that no live grant
        // claims is then certainly an orphan (see removeOrphan), not a grant another thread is about to register.
        CountDownLatch slot = claimSlot(request);
        if (slot == null) {
            return Optional.empty();
        }
        try {
            connectedWithin(request.remaining(), name);
            ZkGrant grant = grantOrReclaim(name);
            if (grant == null) {
                return Optional.empty();
            }
            Holding holding = new Holding(request.onLoss());
            live.put(grant, holding);
            if (!client.getZookeeperClient().isConnected()) {
                // The connection dropped between the commit and the registration: the listener did not see us.
                holding.markLost("the ZooKeeper connection dropped right after the grant");
            }
            return Optional.of(grant);
        }
        finally {
            freeSlot(name, slot);
        }
    }

    /** Like {@link #renewAll} for one grant: one {@code sync} (and the first time an {@code exists}). */
    @Override
    public boolean renew(ZkGrant g) throws Exception {
        return renewAll(List.of(g)).isEmpty();
    }

    /**
     * Confirms grants with one round trip on the session, whatever their number. A holder znode is ephemeral, so it
     * lives as long as the session that created it unless someone deletes it; a grant is therefore still ours when
     * <ul>
     *   <li>its session is the client's current session (a new session means its holders are gone),</li>
     *   <li>the connection was not {@code SUSPENDED} or {@code LOST} since the grant (reported lost at that moment),</li>
     *   <li>and its holder was not deleted: the first renewal of a grant sets a watch on its holder with an
     *       {@code exists} (which also checks the holder is the one this grant created), and the watch reports a later
     *       deletion at once.</li>
     * </ul>
     * A {@code sync} on the lease root, answered on the session, then proves the session alive now. ZooKeeper sends a
     * session's watch events and responses in order, and the {@code sync} makes the server catch up with the leader
     * first, so every deletion committed before this call was reported (and its grant marked lost) before the answer.
     * Grants whose holder is watched cost nothing more than that one {@code sync}.
     */
    @Override
    public Set<ZkGrant> renewAll(Collection<ZkGrant> grants) throws Exception {
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
                    client.runSafe(() -> forget(watcher, holder));
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
            client.runSafe(() -> holding.listener.leaseLost(reason));
        }
        catch (RuntimeException closed) {
            holding.listener.leaseLost(reason); // the client is closing: tell the listener here rather than never
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
        Duration limit = sessionTimeout();
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

    /**
     * Releases at once when connected. While disconnected it does not block the caller (who is usually a holder
     * being told its lease is lost): the release is kept and retried when the connection is back, because a holder
     * znode of a live session would otherwise block the name until that session ends.
     */
    @Override
    public void release(ZkGrant g) throws Exception {
        live.remove(g);
        markUsed(g.name());
        if (!client.getZookeeperClient().isConnected()) {
            pendingReleases.add(g);
            return;
        }
        try {
            releaseNow(g);
        }
        catch (KeeperException.ConnectionLossException | KeeperException.SessionMovedException ex) {
            pendingReleases.add(g);
        }
    }

    /**
     * Deletes the holder our grant created, identified by what the store says (our instance id, and the grant's zxid
     * as its creation zxid), whichever session owns it now: a holder of an ended session is gone, and a successor's
     * holder, even one at our version after the name was re-created, has another creation zxid. See
     * {@code OurHolders} for why the version-checked delete that follows the read cannot meet a successor's holder.
     */
    private void releaseNow(ZkGrant g) throws Exception {
        if (!holders.delete(g.name(), g.version(), g.zxid())) {
            log.debug("Lease '" + g.name() + "' (token " + g.value() + ") has no holder of its own left (its session "
                    + "ended, or someone else holds it now); nothing to release");
        }
    }

    /**
     * Removes the holder znode that the failed request may have committed (Curator queues a request before it
     * waits, so an interrupted or timed-out grant can still be committed, and retries it on a new session after an
     * expiry): a holder carrying this backend's instance id that no live grant claims, whichever session owns it.
     * ZooKeeper handles one session's requests in the order they were sent, so the reads here come after the
     * abandoned {@code multi}, whatever became of it, unless Curator retries it later on a new session: that retry
     * finds a session other than the one it was sent on and removes its own holder itself.
     *
     * <p>While another grant attempt for the name runs here, it is left to that attempt: its {@code multi} was sent
     * after the abandoned one, so it meets the holder and removes it as an orphan before granting afresh (and if it
     * fails too, its own abandon comes). While disconnected, the removal is kept and retried when the same session
     * reconnects, as releases are; if the session ends instead, the server deletes the holder with it.
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        removeAbandoned(request.name());
    }

    private void removeAbandoned(String name) throws Exception {
        if (!client.getZookeeperClient().isConnected()) {
            pendingAbandons.add(name);
            return;
        }
        CountDownLatch slot = new CountDownLatch(1);
        if (acquiring.putIfAbsent(name, slot) != null) {
            return;
        }
        try {
            removeOrphan(name, "a grant request that failed or was interrupted");
        }
        catch (KeeperException.ConnectionLossException | KeeperException.SessionMovedException ex) {
            pendingAbandons.add(name);
        }
        finally {
            freeSlot(name, slot);
        }
    }

    /**
     * Takes the name's slot, waiting until the deadline for a request of ours already in flight for it: its outcome
     * decides whether this one can be granted, and a request stuck on a dead connection must read as the store not
     * answering, not as the lease being busy.
     *
     * @return the slot, or null when the other request granted the lease meanwhile (then it is busy)
     * @throws TimeoutException when the other request is still unanswered at the deadline
     */
    private CountDownLatch claimSlot(GrantRequest request) throws InterruptedException, TimeoutException {
        CountDownLatch mine = new CountDownLatch(1);
        while (true) {
            CountDownLatch other = acquiring.putIfAbsent(request.name(), mine);
            if (other == null) {
                return mine;
            }
            long left = request.remaining().toNanos();
            if (left <= 0 || !other.await(left, TimeUnit.NANOSECONDS)) {
                throw new TimeoutException("ZooKeeper did not answer in time: another grant request of this process "
                        + "for lease '" + request.name() + "' is still unanswered (the store may be unreachable)");
            }
            if (live.keySet().stream().anyMatch(g -> g.name().equals(request.name()))) {
                return null;
            }
        }
    }

    private void freeSlot(String name, CountDownLatch slot) {
        acquiring.remove(name, slot);
        slot.countDown();
    }

    /**
     * Sends nothing while disconnected: Curator would block in connection timeouts and retries far past the caller's
     * deadline, and a request queued now could be committed after the caller gave up on it.
     */
    private void connectedWithin(Duration timeout, String name) throws Exception {
        if (client.getZookeeperClient().isConnected()) {
            return;
        }
        if (!client.blockUntilConnected((int) Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("ZooKeeper is unreachable: not connected within " + timeout.toMillis()
                    + " ms, so no grant request for lease '" + name + "' was sent");
        }
    }

    private void retryPending() {
        for (String name : pendingAbandons) {
            if (!pendingAbandons.remove(name)) {
                continue;
            }
            try {
                removeAbandoned(name);
            }
            catch (Exception ex) {
                log.warn("Could not remove the holder znode a failed grant request for lease '" + name + "' may have "
                        + "left, after reconnecting; it goes away with this client's session: " + ex);
            }
        }
        for (ZkGrant g : pendingReleases) {
            if (!pendingReleases.remove(g)) {
                continue;
            }
            try {
                releaseNow(g);
            }
            catch (Exception ex) {
                log.warn("Could not release lease '" + g.name() + "' (token " + g.value() + ") after reconnecting; "
                        + "its holder znode goes away with this client's session: " + ex);
            }
        }
    }

    /** Waits for the holder znode to change (a watch), returning at once when nobody holds the lease. */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
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
                forget(watcher, holder);
            }
        }
    }

    /**
     * Judges from the connection state the client already tracks, without a round trip: connected (and not read-only)
     * is healthy. A {@code SUSPENDED} connection is not, although the session may still be alive: this backend reports
     * every lease lost at that moment, so no lease can be relied on until the connection is back.
     *
     * @return the connection state, the connect string, the lease root and the client's namespace if it has one
     * @throws IllegalStateException when the client is not started, closed, or not connected
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) {
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

    /**
     * Stops listening to the client's connection state and to the holders' deletion, and reports every grant still
     * live here lost: without the listeners, nothing would tell their holders of a suspended connection. The client
     * itself stays open; the holder znodes stay until released or until the session ends.
     */
    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(stateListener);
        if (idleSweeps != null) {
            idleSweeps.shutdownNow();
        }
        live.forEach((g, holding) -> {
            // Lost before the watch goes: its removal is an event of its own, which must find the grant lost already.
            holding.markLost("the ZooKeeper lease backend was closed: the loss of its connection would go unnoticed");
            Watcher watcher = holding.watcher;
            if (watcher != null) {
                forget(watcher, paths.holder(g.name()));
            }
        });
    }

    private void sweepIdleNames() {
        try {
            int deleted = idleNames.sweep();
            if (deleted > 0) {
                log.debug("Deleted the znodes of " + deleted + " idle lease name(s) under " + paths.root());
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            log.debug("Could not look for idle lease names under " + paths.root() + " (tried again later): " + ex);
        }
    }

    /** Deletes the znodes of names seen idle for long enough, now (for tests); 0 when idle names are kept. */
    int deleteIdleNamesNow() throws Exception {
        return idleNames == null ? 0 : idleNames.sweep();
    }

    private void markUsed(String name) {
        if (idleNames != null) {
            idleNames.forget(name);
        }
    }

    private ZkGrant grantOrReclaim(String name) throws Exception {
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
                client.transactionOp().setData().forPath(paths.counter(name), NO_DATA));
        Stat counter = result(results, OperationType.SET_DATA, name).getResultStat();
        int version = counter.getVersion();
        // Every operation of a multi carries the multi's zxid: it is also the holder's czxid.
        long zxid = counter.getMzxid();
        long now = sessionId();
        long owner = OurHolders.ownerOf(result(results, OperationType.CREATE, name).getResultStat(), sentOn, now);
        long token = tokenSource == ZooKeeperTokenSource.ZXID ? zxid : version;
        ZkGrant grant = new ZkGrant(name, token, version, owner, zxid);
        if (owner == 0 || owner != sentOn || owner != now) {
            throw sessionChanged(grant, sentOn, now);
        }
        if (version <= 0) {
            // ZooKeeper versions are ints; past Integer.MAX_VALUE they wrap and would hand out a smaller token (and
            // a release could no longer check it).
            release(grant);
            throw new IllegalStateException("Lease '" + name + "': the version of " + paths.counter(name)
                    + " wrapped around (" + version + "), so it can no longer issue increasing fencing tokens. "
                    + "Use a new lease name (and carry the resources' fences over to it).");
        }
        // The holder is one child; a second one is the zxid marker. The marker is in place before any zxid token of
        // the name is handed out, and a version grant sees it in the stat of its own multi, so no extra round trip.
        boolean marked = counter.getNumChildren() > 1;
        if (tokenSource == ZooKeeperTokenSource.VERSION && marked) {
            release(grant);
            throw mixedTokens(name, paths.zxidMarker(name) + " says zxid tokens were issued for it");
        }
        if (tokenSource == ZooKeeperTokenSource.ZXID && !marked) {
            markZxid(grant);
        }
        markUsed(name);
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

    /** Marks a name granted with zxid tokens before its first zxid token leaves this backend. */
    private void markZxid(ZkGrant grant) throws Exception {
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(paths.zxidMarker(grant.name()), NO_DATA);
        }
        catch (KeeperException.NodeExistsException marked) {
            // Another zxid instance marked it first.
        }
        catch (Exception ex) {
            release(grant); // the token was never handed out
            throw ex;
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

    private void createCounter(String name) throws Exception {
        try {
            if (tokenSource == ZooKeeperTokenSource.ZXID) {
                // Created marked, so that the first grant of a new name costs no extra write.
                inRoot(() -> client.transaction().forOperations(
                        client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.counter(name), NO_DATA),
                        client.transactionOp().create().withMode(CreateMode.PERSISTENT)
                                .forPath(paths.zxidMarker(name), NO_DATA)));
            }
            else {
                createVersionCounter(name);
            }
        }
        catch (KeeperException.NodeExistsException raced) {
            // Another client created it first: fine, it is the same counter.
        }
    }

    /**
     * A name's znode may be missing because an instance with {@code delete-idle-after} deleted it after zxid grants;
     * re-creating it at version 0 would send tokens back. Such an instance marks the root before it deletes anything,
     * and the create is conditional on the root's version seen unmarked here, so a marking in between fails it.
     */
    private void createVersionCounter(String name) throws Exception {
        Stat root = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(root).forPath(paths.root());
        }
        catch (KeeperException.NoNodeException ex) {
            createRoot();
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
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.counter(name), NO_DATA));
        }
        catch (KeeperException.BadVersionException marked) {
            // The root changed meanwhile: the grant finds no znode and reports busy, and the next attempt reads again.
        }
    }

    private interface ZkWrite {
        void run() throws Exception;
    }

    private void inRoot(ZkWrite write) throws Exception {
        try {
            write.run();
        }
        catch (KeeperException.NoNodeException ex) {
            createRoot();
            write.run();
        }
    }

    private void createRoot() throws Exception {
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths.root(), NO_DATA);
        }
        catch (KeeperException.NodeExistsException raced) {
            // Created by someone else meanwhile.
        }
    }

    /**
     * A grant whose response was lost (connection loss after the commit, then Curator's retry hit NodeExists)
     * leaves a holder of our session that nobody here knows about; left alone it would block the name until the
     * session ends. It is removed (see {@link #removeOrphan}) and the name granted afresh, with a new token.
     * Adopting it instead would race with a release of that same grant still in flight and could leave a holder
     * without a znode behind it.
     */
    private ZkGrant removeOrphanAndRegrant(String name) throws Exception {
        if (!removeOrphan(name, "a grant whose response was lost; granting afresh")) {
            return null;
        }
        try {
            return grant(name);
        }
        catch (KeeperException.NoNodeException | KeeperException.NodeExistsException raced) {
            return null; // someone removed the counter or granted the name meanwhile: a spurious "busy", the engine retries
        }
    }

    /**
     * Deletes the holder znode of {@code name} if it is an orphan: ours, and claimed by no live grant (see
     * {@code OurHolders.removeOrphan}). The caller holds the name's {@code acquiring} slot, so no grant of ours can be
     * registered meanwhile.
     */
    private boolean removeOrphan(String name, String leftBy) throws Exception {
        return holders.removeOrphan(name, czxid -> live.keySet().stream()
                .anyMatch(g -> g.name().equals(name) && g.zxid() == czxid), leftBy);
    }

    private void connectionStateChanged(ConnectionState state) {
        lastState = state;
        if (state == ConnectionState.RECONNECTED) {
            // Same session: our holders survived and must go. New session: they are normally gone with the old one;
            // the retry deletes any that are left (identified by instance id and creation zxid, not by session).
            if (!pendingReleases.isEmpty() || !pendingAbandons.isEmpty()) {
                client.runSafe(this::retryPending);
            }
            return;
        }
        if (state != ConnectionState.SUSPENDED && state != ConnectionState.LOST) {
            return;
        }
        if (!live.isEmpty()) {
            log.warn("ZooKeeper connection " + state + ": reporting " + live.size() + " lease(s) lost now");
        }
        String reason = "the ZooKeeper connection is " + state + " (a suspended session may expire at any moment "
                + "and hand the lease to someone else)";
        live.values().forEach(holding -> holding.markLost(reason));
    }

    private void forget(Watcher watcher, String path) {
        try {
            client.watchers().remove(watcher).locally().quietly().forPath(path);
        }
        catch (Exception ex) {
            log.debug("Could not remove the watch on " + path + ": " + ex);
        }
    }

    /**
     * What this backend knows of a live grant: who to tell of its loss, whether a watch on its holder is set, and
     * whether it was lost (the first reason wins, and the listener hears it once).
     */
    private static final class Holding {

        private final LossListener listener;
        private final AtomicReference<String> lostBecause = new AtomicReference<>();
        private volatile boolean armed;
        /** The watch set on its holder by the first renewal, if any. */
        private volatile Watcher watcher;

        Holding(LossListener listener) {
            this.listener = listener;
        }

        boolean lost() {
            return lostBecause.get() != null;
        }

        /** Marks the grant lost; true when it was not lost before, and the caller must then tell the listener. */
        boolean lose(String reason) {
            return lostBecause.compareAndSet(null, reason);
        }

        void markLost(String reason) {
            if (lose(reason)) {
                listener.leaseLost(reason);
            }
        }
    }

    /** Number of grants this backend currently holds (for tests and diagnostics). */
    int liveGrants() {
        return live.size();
    }

    /** What this backend writes into its holder znodes (for tests). */
    byte[] instanceId() {
        return instanceId.clone();
    }

    /**
     * One grant: {@code value} is its token (the counter's version or the grant's zxid), {@code version} the counter's
     * version after the grant (which a release checks), {@code sessionId} the session that committed it (which owns its
     * holder) and {@code zxid} the zxid of the granting {@code multi}, which is also its holder's
     * creation zxid.
     */
    record ZkGrant(String name, long value, int version, long sessionId, long zxid) implements Grant {

        @Override
        public OptionalLong token() {
            return OptionalLong.of(value);
        }
    }
}
