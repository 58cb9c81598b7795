package dev.lease.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;

import dev.lease.etcd.SharedLeases.Shared;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * Leases as etcd keys bound to etcd leases, fenced by the key's {@code create_revision}: global to the cluster,
 * strictly increasing for a name across deletions (every grant creates the key anew), and unchanged by renewals.
 *
 * <ul>
 *   <li>Grant: one transaction {@code if create_revision(key) == 0 then put(key, attempt, lease = L)}; the token is
 *       the key's create_revision. Only for a name found busy before, a serializable read of the key first, which
 *       while the key is there answers busy without a write ({@link BusyNames}).
 *       {@code L} is the etcd lease this backend shares among its grants of the same ttl ({@link SharedLeases}): kept
 *       alive from the request's start by a keep-alive sent with the transaction, or granted for it when there is
 *       none.</li>
 *   <li>Renewal ({@link Renewals}): a keep-alive of each shared lease of the batch ({@code LeaseKeepAlive} once: jetcd's
 *       keep-alive loop runs on the wall clock, and the engine's own monotonic validity decides), and with it one
 *       transaction per 128 grants that compares every key's create_revision with its token: a successful keep-alive
 *       does not prove the key is still there (etcd#14758). A lease gone loses its grants, a key gone or re-created
 *       its grant alone.</li>
 *   <li>Release: a transaction deleting the key if its create_revision is still the token; the last grant of a shared
 *       lease revokes it. Keys nobody holds any more that a shared lease would keep ({@link Leftovers}) are deleted,
 *       each only if it is still that key, at the next renewal round.</li>
 *   <li>Waiting: a watch for the key's deletion, one per key for all waiting threads of this backend.</li>
 * </ul>
 *
 * Expiry is the server's: the etcd leader expires {@code L} a ttl after its last keep-alive, on its own clock, which
 * deletes its keys. etcd's {@code Lock} and {@code Election} APIs are not used: on etcd 3.4 a lock can be held twice
 * after a lease expires during a request (etcd#11456), and they hand out no token a resource can check.
 */
public final class EtcdLeaseBackend implements LeaseBackend<EtcdGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "etcd";

    /** The default key prefix ({@code lease.etcd.key-prefix}). */
    public static final String DEFAULT_KEY_PREFIX = "/leases/";

    private static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(5);

    private static final GetOption BUSY_CHECK = GetOption.builder().withCountOnly(true).withSerializable(true).build();

    private static final BackendTraits TRAITS = BackendTraits.fenced()
            .withRenewsInOneCall(true)
            .withBoundsCallsByDeadline(true);

    private final KV kv;
    private final Lease leases;
    private final String keyPrefix;
    private final long callTimeoutNanos;
    private final KeyWatches watches;
    private final SharedLeases shared;
    private final Holdings holdings = new Holdings();
    private final BusyNames busy = new BusyNames();
    private final Leftovers leftovers;
    private final Renewals renewals;
    /** The etcd lease of each grant request still in flight or failed, by attempt id, for {@link #abandon}. */
    private final Map<String, Shared> pending = new ConcurrentHashMap<>();

    /**
     * @param client the etcd client; left open on {@link #close()}, it belongs to the caller
     * @param keyPrefix prefix of every lease key, such as {@code /leases/}
     * @throws IllegalArgumentException when the prefix is empty or contains control characters
     */
    public EtcdLeaseBackend(Client client, String keyPrefix) {
        this(client, keyPrefix, DEFAULT_CALL_TIMEOUT);
    }

    /**
     * @param client the etcd client; left open on {@link #close()}, it belongs to the caller
     * @param keyPrefix prefix of every lease key, such as {@code /leases/}
     * @param callTimeout the longest a renewal, release or health check waits for etcd (a grant request waits no
     *        longer than its own deadline either)
     * @throws IllegalArgumentException when the prefix is empty or contains control characters
     */
    public EtcdLeaseBackend(Client client, String keyPrefix, Duration callTimeout) {
        this.keyPrefix = validateKeyPrefix(keyPrefix);
        this.kv = client.getKVClient();
        this.leases = client.getLeaseClient();
        this.callTimeoutNanos = callTimeout.toNanos();
        this.watches = new KeyWatches(client.getWatchClient());
        this.leftovers = new Leftovers(kv, callTimeoutNanos);
        this.shared = new SharedLeases(leases, leftovers::leaseGone);
        this.renewals = new Renewals(kv, shared, holdings, leftovers, callTimeoutNanos);
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Fenced. The keep-alives of a batch go out together on the client's one connection (one per shared etcd lease),
     * and one transaction checks the keys. Every call is asynchronous in jetcd and awaited no longer than its deadline.
     */
    @Override
    public BackendTraits traits() {
        return TRAITS;
    }

    @Override
    public Optional<EtcdGrant> tryAcquire(GrantRequest request) throws Exception {
        long start = System.nanoTime();
        String name = LeaseNames.validate(request.name());
        ByteSequence key = key(name);
        long ttlSeconds = ttlSeconds(request.ttl());
        String what = "the grant of lease '" + name + "'";
        // Only for a name found busy before: a serializable read (no quorum round) that, while it shows the key, spares
        // the writes of a grant. It may be a little stale, but only the transaction below decides a grant.
        if (busy.seenBusy(name)) {
            if (EtcdCalls.idempotent(() -> kv.get(key, BUSY_CHECK), bound(request), what).getCount() > 0) {
                return Optional.empty();
            }
            busy.free(name);
        }
        for (boolean firstTry = true; ; firstTry = false) {
            Shared lease = shared.join(ttlSeconds, start);
            CompletableFuture<LeaseKeepAliveResponse> keepAlive = null;
            if (lease == null) {
                long sentAt = System.nanoTime();
                // Sent again when unanswered: a lease granted twice leaves one that no key uses, gone after its ttl.
                lease = shared.adopt(EtcdCalls.idempotent(() -> leases.grant(ttlSeconds), bound(request), what)
                        .getID(), ttlSeconds, sentAt);
            }
            else {
                // A lease others hold lives until a ttl after its last keep-alive; this grant's validity counts from
                // start, so the lease must be kept alive from then on too.
                keepAlive = shared.keepAlive(lease, start);
            }
            pending.put(request.attempt(), lease);
            TxnResponse answer;
            try {
                // Sent once: a second copy could find the key the first created and answer busy for a grant this
                // instance holds. A transaction without an answer makes the request fail, and the engine abandons it.
                answer = EtcdCalls.await(kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(key, bytes(request.attempt()), PutOption.builder().withLeaseId(lease.id).build()),
                                Op.get(key, GetOption.DEFAULT))
                        .commit(), bound(request), what);
                if (keepAlive != null && answer.isSucceeded()) {
                    Shared joined = lease;
                    EtcdCalls.retrying(keepAlive, () -> shared.keepAlive(joined, System.nanoTime()),
                            System.nanoTime() + bound(request), what);
                }
            }
            catch (Exception ex) {
                if (!(firstTry && keepAlive != null && EtcdCalls.leaseGone(ex))) {
                    throw ex; // the request stays pending with its lease, for abandon
                }
                // The shared lease expired or was revoked: a put on it fails, and a key put just before went with it.
                pending.remove(request.attempt());
                shared.retire(lease);
                shared.leave(lease);
                continue;
            }
            pending.remove(request.attempt());
            if (!answer.isSucceeded()) {
                busy.busy(name);
                shared.leave(lease);
                return Optional.empty();
            }
            busy.free(name);
            KeyValue created = answer.getGetResponses().get(0).getKvs().get(0);
            EtcdGrant grant = new EtcdGrant(name, key, request.attempt(), lease.id, created.getCreateRevision(),
                    ttlSeconds);
            holdings.add(grant, lease, start);
            return Optional.of(grant);
        }
    }

    @Override
    public boolean renew(EtcdGrant grant) throws Exception {
        return renewAll(List.of(grant)).isEmpty();
    }

    /**
     * Keeps the shared etcd leases of the grants alive, and checks in one transaction per
     * {@value Renewals#MAX_TXN_OPS} grants that every key still exists with its create_revision ({@link Renewals}).
     *
     * @return the grants whose etcd lease is gone, whose key is gone or was created anew, or that were not held
     */
    @Override
    public Set<EtcdGrant> renewAll(Collection<EtcdGrant> grants) throws Exception {
        return grants.isEmpty() ? Set.of() : renewals.renewAll(grants);
    }

    /**
     * Deletes the key if its create_revision is still the token; the grant's share of its etcd lease ends, and the last
     * grant of a lease revokes it. A key whose deletion failed is deleted at a later renewal round, or goes with its
     * lease.
     */
    @Override
    public void release(EtcdGrant grant) throws Exception {
        Shared lease = holdings.remove(grant);
        try {
            // Sent again when unanswered: a second deletion conditional on the token deletes nothing more.
            EtcdCalls.idempotent(() -> kv.txn().If(Renewals.stillOurs(grant))
                    .Then(Op.delete(grant.key(), DeleteOption.DEFAULT)).commit(), callTimeoutNanos,
                    "the release of lease '" + grant.name() + "'");
        }
        catch (Exception ex) {
            if (lease != null) {
                leftovers.grantLeft(grant);
            }
            throw ex;
        }
        finally {
            if (lease != null) {
                shared.leave(lease);
            }
        }
    }

    /**
     * Deletes the key if it still holds the request's attempt id (the transaction may have been applied although its
     * answer never came back). The request's transaction may also still be on its way, and would create the key on a
     * lease that other grants keep alive: that lease takes no new grants from now on, and the key is looked for at
     * every renewal round until the lease is gone ({@link Leftovers}).
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        ByteSequence key = key(name);
        Shared lease = pending.remove(request.attempt());
        try {
            EtcdCalls.idempotent(() -> kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(request.attempt()))))
                    .Then(Op.delete(key, DeleteOption.DEFAULT)).commit(), callTimeoutNanos,
                    "the abandon of lease '" + name + "'");
        }
        finally {
            if (lease != null) {
                leftovers.attemptLeft(key, bytes(request.attempt()), lease.id);
                shared.retire(lease);
                shared.leave(lease);
            }
        }
    }

    /**
     * Reads the key, and if it is there, waits on the key's shared watch (started after that read's revision) for its
     * deletion, or {@code maxWait}.
     */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        long until = System.nanoTime() + maxWait.toNanos();
        ByteSequence key = key(LeaseNames.validate(name));
        GetResponse read;
        try {
            read = EtcdCalls.idempotent(() -> kv.get(key, GetOption.builder().withCountOnly(true).build()),
                    maxWait.toNanos(), "the read of lease '" + name + "'");
        }
        catch (InterruptedException ex) {
            throw ex;
        }
        catch (Exception ex) {
            // etcd unreachable: the engine backs off and tries again.
            return;
        }
        if (read.getCount() == 0
                || watches.awaitDeletion(key, read.getHeader().getRevision(),
                        Duration.ofNanos(Math.max(0, until - System.nanoTime())))) {
            busy.free(name);
        }
    }

    /**
     * Reads the key prefix with a linearizable read, which only a cluster with a leader and a quorum answers.
     *
     * @return the answering member, the raft term, the revision and the key prefix
     * @throws Exception when no member answered within {@code timeout}, or etcd answered with an error (no leader)
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) throws Exception {
        GetResponse read = EtcdCalls.idempotent(() -> kv.get(bytes(keyPrefix),
                GetOption.builder().withCountOnly(true).build()), timeout.toNanos(),
                "a linearizable read (it needs a leader and a quorum)");
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("leader", "known");
        details.put("member", Long.toHexString(read.getHeader().getMemberId()));
        details.put("raftTerm", read.getHeader().getRaftTerm());
        details.put("revision", read.getHeader().getRevision());
        details.put("keyPrefix", keyPrefix);
        return details;
    }

    /** The etcd key holding lease {@code name}. */
    public String keyOf(String name) {
        return keyPrefix + name;
    }

    /** Cancels the watches of waiting threads; the client stays open. */
    @Override
    public void close() {
        watches.close();
    }

    /** The number of keys watched for waiting threads now; for tests. */
    int watchedKeys() {
        return watches.watchedKeys();
    }

    /** The number of keys waiting for a deletion at the next renewal round; for tests. */
    int leftoverCount() {
        return leftovers.size();
    }

    /**
     * Checks a key prefix: non-empty, so lease keys never mix with other keys, and free of control characters.
     *
     * @throws IllegalArgumentException saying what is wrong and how to fix it
     */
    public static String validateKeyPrefix(String prefix) {
        String fix = ". Set lease.etcd.key-prefix to a prefix of its own such as '" + DEFAULT_KEY_PREFIX
                + "' or '/myapp/leases/'.";
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("The etcd lease key prefix is empty, so lease keys would mix with other "
                    + "keys" + fix);
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (Character.isISOControl(prefix.charAt(i))) {
                throw new IllegalArgumentException("The etcd lease key prefix '" + prefix.replaceAll("\\p{Cntrl}", "?")
                        + "' contains the control character " + String.format("U+%04X", (int) prefix.charAt(i)) + fix);
            }
        }
        return prefix;
    }

    private ByteSequence key(String name) {
        return bytes(keyPrefix + name);
    }

    private long bound(GrantRequest request) {
        return Math.min(callTimeoutNanos, request.remaining().toNanos());
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    /** Rounded up to whole seconds (etcd's unit): the server must never expire the key before this process stops believing in it. */
    static long ttlSeconds(Duration ttl) {
        long seconds = ttl.getSeconds();
        return Math.max(1, ttl.getNano() > 0 ? seconds + 1 : seconds);
    }
}
