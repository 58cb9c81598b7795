package dev.lease.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
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
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.NoSuchLeaseException;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * Leases as etcd keys bound to etcd leases, fenced by the key's {@code create_revision}: global to the cluster,
 * strictly increasing for a name across deletions (every grant creates the key anew), and unchanged by renewals.
 *
 * <ul>
 *   <li>Grant: a serializable read of the key (when it is there, the lease is busy), an etcd lease {@code L} of the
 *       ttl, then one transaction
 *       {@code if create_revision(key) == 0 then put(key, attempt, lease = L)}; the token is the key's create_revision.</li>
 *   <li>Renewal: a keep-alive of {@code L} ({@code LeaseKeepAlive} once: jetcd's keep-alive observer completes on a
 *       deadline of the local wall clock, and the engine's own monotonic validity decides), then one transaction that
 *       compares every renewed key's create_revision with its token: a successful keep-alive does not prove the key is
 *       still there (etcd#14758). A keep-alive answered with ttl 0 or a key gone or re-created is a loss.</li>
 *   <li>Release: a transaction deleting the key if its create_revision is still the token, then a revoke of {@code L}.</li>
 *   <li>Waiting: a watch for the key's deletion, one per key for all waiting threads of this backend.</li>
 * </ul>
 *
 * Expiry is the server's: the etcd leader expires {@code L} after its ttl, on its own clock, which deletes the key.
 * etcd's {@code Lock} and {@code Election} APIs are not used: on etcd 3.4 a lock can be held twice after a lease
 * expires during a request (etcd#11456), and they hand out no token a resource can check.
 */
public final class EtcdLeaseBackend implements LeaseBackend<EtcdGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "etcd";

    /** The default key prefix ({@code lease.etcd.key-prefix}). */
    public static final String DEFAULT_KEY_PREFIX = "/leases/";

    /** etcd refuses transactions of more operations than its --max-txn-ops, 128 by default. */
    static final int MAX_TXN_OPS = 128;

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
    /** The etcd lease of each grant request still in flight or failed, by attempt id, for {@link #abandon}. */
    private final Map<String, Long> pending = new ConcurrentHashMap<>();

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
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Fenced. The keep-alives of a batch go out together on the client's one connection, and one transaction checks
     * the keys. Every call is asynchronous in jetcd and awaited no longer than its deadline.
     */
    @Override
    public BackendTraits traits() {
        return TRAITS;
    }

    @Override
    public Optional<EtcdGrant> tryAcquire(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        ByteSequence key = key(name);
        long ttlSeconds = ttlSeconds(request.ttl());
        String what = "the grant of lease '" + name + "'";
        // A serializable read of the member we talk to, no quorum round: when it shows the key, the lease is busy and
        // the two writes of a grant (an etcd lease, a transaction) and the revoke are spared. It may be a little
        // stale, but only the transaction below decides a grant.
        if (EtcdCalls.await(kv.get(key, BUSY_CHECK), bound(request), what).getCount() > 0) {
            return Optional.empty();
        }
        long leaseId = EtcdCalls.await(leases.grant(ttlSeconds), bound(request), what).getID();
        pending.put(request.attempt(), leaseId);
        TxnResponse answer = EtcdCalls.await(kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                .Then(Op.put(key, bytes(request.attempt()), PutOption.builder().withLeaseId(leaseId).build()),
                        Op.get(key, GetOption.DEFAULT))
                .commit(), bound(request), what);
        pending.remove(request.attempt());
        if (!answer.isSucceeded()) {
            // Nobody else will ever use this lease: let it go now rather than at its ttl.
            leases.revoke(leaseId);
            return Optional.empty();
        }
        KeyValue created = answer.getGetResponses().get(0).getKvs().get(0);
        return Optional.of(new EtcdGrant(name, key, request.attempt(), leaseId, created.getCreateRevision(), ttlSeconds));
    }

    @Override
    public boolean renew(EtcdGrant grant) throws Exception {
        return renewAll(List.of(grant)).isEmpty();
    }

    /**
     * Keeps every grant's etcd lease alive, then checks in one transaction (per {@value #MAX_TXN_OPS} grants) that every
     * key whose keep-alive succeeded still exists with its create_revision.
     *
     * @return the grants whose etcd lease is gone (keep-alive answered ttl 0) or whose key is gone or was created anew
     */
    @Override
    public Set<EtcdGrant> renewAll(Collection<EtcdGrant> grants) throws Exception {
        if (grants.isEmpty()) {
            return Set.of();
        }
        long until = System.nanoTime() + callTimeoutNanos;
        List<EtcdGrant> batch = List.copyOf(grants);
        List<CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new ArrayList<>(batch.size());
        for (EtcdGrant grant : batch) {
            keepAlives.add(leases.keepAliveOnce(grant.leaseId()));
        }
        Set<EtcdGrant> lost = new HashSet<>();
        List<EtcdGrant> alive = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            EtcdGrant grant = batch.get(i);
            LeaseKeepAliveResponse answer;
            try {
                answer = EtcdCalls.await(keepAlives.get(i), until - System.nanoTime(),
                        "the keep-alive of lease '" + grant.name() + "'");
            }
            catch (NoSuchLeaseException gone) {
                lost.add(grant);
                continue;
            }
            catch (EtcdException ex) {
                // "requested lease not found": this grant's lease expired or was revoked; the others may be fine.
                if (ex.getErrorCode() != ErrorCode.NOT_FOUND) {
                    throw ex;
                }
                lost.add(grant);
                continue;
            }
            // etcd answers ttl 0 for a lease it does not know (expired or revoked).
            if (answer.getTTL() <= 0) {
                lost.add(grant);
            }
            else {
                alive.add(grant);
            }
        }
        List<List<EtcdGrant>> chunks = new ArrayList<>();
        for (int from = 0; from < alive.size(); from += MAX_TXN_OPS) {
            chunks.add(alive.subList(from, Math.min(alive.size(), from + MAX_TXN_OPS)));
        }
        List<CompletableFuture<TxnResponse>> checks = new ArrayList<>(chunks.size());
        for (List<EtcdGrant> chunk : chunks) {
            checks.add(kv.txn().If(chunk.stream().map(EtcdLeaseBackend::stillOurs).toArray(Cmp[]::new))
                    .Else(chunk.stream().map(g -> Op.get(g.key(), GetOption.DEFAULT)).toArray(Op[]::new))
                    .commit());
        }
        for (int c = 0; c < chunks.size(); c++) {
            TxnResponse answer = EtcdCalls.await(checks.get(c), until - System.nanoTime(), "the check of "
                    + chunks.get(c).size() + " lease keys");
            if (!answer.isSucceeded()) {
                List<GetResponse> reads = answer.getGetResponses();
                for (int i = 0; i < chunks.get(c).size(); i++) {
                    EtcdGrant grant = chunks.get(c).get(i);
                    List<KeyValue> found = reads.get(i).getKvs();
                    if (found.isEmpty() || found.get(0).getCreateRevision() != grant.createRevision()) {
                        lost.add(grant);
                    }
                }
            }
        }
        return lost;
    }

    @Override
    public void release(EtcdGrant grant) throws Exception {
        try {
            EtcdCalls.await(kv.txn().If(stillOurs(grant)).Then(Op.delete(grant.key(), DeleteOption.DEFAULT)).commit(),
                    callTimeoutNanos, "the release of lease '" + grant.name() + "'");
        }
        finally {
            // Deletes the key too if the transaction did not get through; a failure leaves the lease to its ttl.
            leases.revoke(grant.leaseId());
        }
    }

    /**
     * Deletes the key if it still holds the request's attempt id (the transaction may have been applied although its
     * answer never came back), and revokes the etcd lease the request was granted, so that a transaction of the request
     * that a client retry delivers late fails on the revoked lease.
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        String name = LeaseNames.validate(request.name());
        ByteSequence key = key(name);
        Long leaseId = pending.remove(request.attempt());
        try {
            EtcdCalls.await(kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(request.attempt()))))
                    .Then(Op.delete(key, DeleteOption.DEFAULT)).commit(), callTimeoutNanos,
                    "the abandon of lease '" + name + "'");
        }
        finally {
            if (leaseId != null) {
                leases.revoke(leaseId);
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
            read = EtcdCalls.await(kv.get(key, GetOption.builder().withCountOnly(true).build()), maxWait.toNanos(),
                    "the read of lease '" + name + "'");
        }
        catch (InterruptedException ex) {
            throw ex;
        }
        catch (Exception ex) {
            // etcd unreachable: the engine backs off and tries again.
            return;
        }
        if (read.getCount() == 0) {
            return;
        }
        watches.awaitDeletion(key, read.getHeader().getRevision(), Duration.ofNanos(Math.max(0, until - System.nanoTime())));
    }

    /**
     * Reads the key prefix with a linearizable read, which only a cluster with a leader and a quorum answers.
     *
     * @return the answering member, the raft term, the revision and the key prefix
     * @throws Exception when no member answered within {@code timeout}, or etcd answered with an error (no leader)
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) throws Exception {
        GetResponse read = EtcdCalls.await(kv.get(bytes(keyPrefix), GetOption.builder().withCountOnly(true).build()),
                timeout.toNanos(), "a linearizable read (it needs a leader and a quorum)");
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

    private static Cmp stillOurs(EtcdGrant grant) {
        return new Cmp(grant.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(grant.createRevision()));
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
