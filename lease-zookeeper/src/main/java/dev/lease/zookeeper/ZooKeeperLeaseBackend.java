package dev.lease.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.IdleDeletion;
import dev.lease.spi.LeaseBackend;

/**
 * Leases in ZooKeeper, fenced by the version of a persistent znode per name, or by the zxid of the granting write.
 *
 * <p>A grant is one {@code multi}: create the ephemeral {@code {root}/{name}/holder} and {@code setData} on the
 * persistent {@code {root}/{name}}. With {@link ZooKeeperTokenSource#VERSION} (the default) the token is that znode's
 * new version, which only ever grows, so tokens strictly increase per name for as long as nobody deletes
 * {@code {root}/{name}} (the library then never does). With {@link ZooKeeperTokenSource#ZXID} the token is the zxid
 * of the {@code multi}, which rises ensemble-wide, also across deletion and re-creation of {@code {root}/{name}}, so
 * the znodes of idle names may be deleted ({@code deleteIdleAfter}). A release is one {@code multi} that checks the
 * counter is still at our grant's version and deletes the holder. Where a re-created counter could have reached our
 * version again (zxid tokens, or a grant in doubt: lost, or its session changed) it first reads the holder and deletes
 * it only if it is the one our grant created (our instance id, the grant's zxid as its creation zxid). Holders are known by
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
public final class ZooKeeperLeaseBackend implements LeaseBackend<ZkGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "zookeeper";

    private static final BackendTraits TRAITS = BackendTraits.fenced().withRenewsInOneCall(true);

    private static final IdleDeletion IDLE_NAMES = new IdleDeletion("lease.zookeeper", ZooKeeperTokenSource.ZXID,
            "a deleted znode is re-created at version 0, so version tokens would go back after an idle name was "
                    + "deleted", "names");

    private final CuratorFramework client;
    private final LeasePaths paths;
    private final Duration configuredSessionTimeout;
    /** Written into our holder znodes so that an orphan left by a lost response can be told apart from a grant
     *  of another backend sharing the same client (and session). */
    private final byte[] instanceId = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
    private final LiveGrants live = new LiveGrants();
    private final NameSlots slots = new NameSlots(live);
    private final Releases releases;
    private final GrantTransactions grants;
    private final SessionRenewal renewal;
    private final ConnectionWatch connection;
    private final ReleaseWaiter waiter;
    /** Deletes idle names' znodes when {@code deleteIdleAfter} is set; null otherwise. */
    private final IdleNameSweeper idleNames;
    private final Runnable stopIdleSweeps;

    /**
     * @param client a started client; its session is the life of every lease granted here
     * @param root absolute parent znode of the lease znodes, such as {@code /leases}
     * @param sessionTimeout the session timeout the client asked for, used as the longest ttl ({@link #traits()}) until the server
     *        has negotiated one
     */
    public ZooKeeperLeaseBackend(CuratorFramework client, String root, Duration sessionTimeout) {
        this(client, root, sessionTimeout, ZooKeeperTokenSource.VERSION, null);
    }

    /**
     * @param client a started client; its session is the life of every lease granted here
     * @param root absolute parent znode of the lease znodes, such as {@code /leases}
     * @param sessionTimeout the session timeout the client asked for, used as the longest ttl ({@link #traits()}) until the server
     *        has negotiated one
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
        this.configuredSessionTimeout = Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        IDLE_NAMES.check(deleteIdleAfter, tokenSource);
        TokenScheme tokens = TokenScheme.of(Objects.requireNonNull(tokenSource, "tokenSource"), client, paths);
        if (deleteIdleAfter != null) {
            this.idleNames = new IdleNameSweeper(client, paths, deleteIdleAfter, System::nanoTime);
        }
        else {
            this.idleNames = null;
        }
        Consumer<String> used = idleNames == null ? name -> { } : idleNames::forget;
        OurHolders holders = new OurHolders(client, paths, instanceId);
        this.releases = new Releases(client, holders, live, slots, used, tokens.keepsCounters());
        this.grants = new GrantTransactions(client, paths, instanceId, holders, tokens, releases, used);
        this.renewal = new SessionRenewal(client, paths, live, this::sessionTimeout);
        this.connection = new ConnectionWatch(client, paths, live, releases);
        this.waiter = new ReleaseWaiter(client, paths);
        this.stopIdleSweeps = idleNames == null ? () -> { } : idleNames.startSweeping();
        connection.start();
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
        // claims is then certainly an orphan (see NameSlots), not a grant another thread is about to register.
        CountDownLatch slot = slots.claim(request);
        if (slot == null) {
            return Optional.empty();
        }
        try {
            connection.awaitConnected(request.remaining(), name);
            ZkGrant grant = grants.grantOrReclaim(name);
            if (grant == null) {
                return Optional.empty();
            }
            connection.register(grant, request.onLoss());
            return Optional.of(grant);
        }
        finally {
            slots.free(name, slot);
        }
    }

    /** Like {@link #renewAll} for one grant: one {@code sync} (and the first time an {@code exists}). */
    @Override
    public boolean renew(ZkGrant g) throws Exception {
        return renewAll(List.of(g)).isEmpty();
    }

    /**
     * Confirms grants with one round trip on the session, whatever their number: a {@code sync} proves the session
     * alive, and a watch set on each holder by its first renewal has reported any deletion before the answer comes.
     * A grant whose session ended, or that was lost to a {@code SUSPENDED} or {@code LOST} connection, is lost.
     */
    @Override
    public Set<ZkGrant> renewAll(Collection<ZkGrant> grants) throws Exception {
        return renewal.renewAll(grants);
    }

    /**
     * Releases at once when connected. While disconnected it does not block the caller (who is usually a holder
     * being told its lease is lost): the release is kept and retried when the connection is back, because a holder
     * znode of a live session would otherwise block the name until that session ends.
     */
    @Override
    public void release(ZkGrant g) throws Exception {
        releases.release(g);
    }

    /**
     * Removes the holder znode that the failed request may have committed: a holder carrying this backend's instance
     * id that no live grant claims, whichever session owns it (Curator retries a request on a new session after an
     * expiry). While disconnected, the removal is kept and retried when the connection is back.
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        releases.abandon(request.name());
    }

    /** Waits for the holder znode to change (a watch), returning at once when nobody holds the lease. */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        waiter.awaitRelease(name, maxWait);
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
        return connection.health();
    }

    /**
     * Stops listening to the client's connection state and to the holders' deletion, and reports every grant still
     * live here lost: without the listeners, nothing would tell their holders of a suspended connection. The client
     * itself stays open; the holder znodes stay until released or until the session ends.
     */
    @Override
    public void close() {
        connection.close();
        stopIdleSweeps.run();
        renewal.loseAllAndUnwatch("the ZooKeeper lease backend was closed: the loss of its connection would go unnoticed");
    }

    /** Deletes the znodes of names seen idle for long enough, now (for tests); 0 when idle names are kept. */
    int deleteIdleNamesNow() throws Exception {
        return idleNames == null ? 0 : idleNames.sweep();
    }

    /** Number of grants this backend currently holds (for tests and diagnostics). */
    int liveGrants() {
        return live.size();
    }

    /** What this backend writes into its holder znodes (for tests). */
    byte[] instanceId() {
        return instanceId.clone();
    }
}
