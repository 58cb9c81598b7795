package dev.lease.etcd;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;

import dev.lease.etcd.SharedLeases.Shared;

/**
 * One renewal round of a batch of grants: a keep-alive of each shared etcd lease the batch's keys are bound to
 * (usually one), and, sent at the same time, one read-only transaction per {@value #MAX_TXN_OPS} grants comparing
 * each key's create_revision with its token. Both are needed: the keep-alive keeps the keys, the comparison proves
 * each key is still there and still the grant's (a keep-alive succeeds after a key was deleted: etcd#14758). A lease
 * whose keep-alive is answered "not found" loses exactly the grants bound to it (their keys went with it); a key gone
 * or created anew loses its grant alone. A keep-alive or check that fails otherwise (etcd busy: "waiting for the
 * applied index took too long", a member without a leader) or is not answered within a share of the round's deadline
 * (a member paused or cut off, which the channel still counts as ready) is sent again, to another member, until the
 * round's deadline ({@link EtcdCalls#retrying}): both are idempotent, and one sent after the round started still
 * proves what the round needs. The round also sends the
 * deletions of leftover keys, without waiting for them.
 */
final class Renewals {

    /** etcd refuses transactions of more operations than its --max-txn-ops, 128 by default. */
    static final int MAX_TXN_OPS = 128;

    private final KV kv;
    private final SharedLeases leases;
    private final Holdings holdings;
    private final Leftovers leftovers;
    private final long callTimeoutNanos;

    Renewals(KV kv, SharedLeases leases, Holdings holdings, Leftovers leftovers, long callTimeoutNanos) {
        this.kv = kv;
        this.leases = leases;
        this.holdings = holdings;
        this.leftovers = leftovers;
        this.callTimeoutNanos = callTimeoutNanos;
    }

    /** @return the grants no longer held: released or given up on before, lease gone, key gone or created anew */
    Set<EtcdGrant> renewAll(Collection<EtcdGrant> grants) throws Exception {
        long start = System.nanoTime();
        long until = start + callTimeoutNanos;
        Set<EtcdGrant> lost = new HashSet<>();
        Map<Shared, List<EtcdGrant>> byLease = new LinkedHashMap<>();
        List<EtcdGrant> held = new ArrayList<>(grants.size());
        for (EtcdGrant grant : grants) {
            Shared lease = holdings.renewing(grant, start);
            if (lease == null) {
                lost.add(grant);
            }
            else {
                byLease.computeIfAbsent(lease, l -> new ArrayList<>()).add(grant);
                held.add(grant);
            }
        }
        Map<Shared, CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new LinkedHashMap<>();
        byLease.keySet().forEach(lease -> keepAlives.put(lease, leases.keepAlive(lease, start)));
        List<List<EtcdGrant>> chunks = new ArrayList<>();
        for (int from = 0; from < held.size(); from += MAX_TXN_OPS) {
            chunks.add(held.subList(from, Math.min(held.size(), from + MAX_TXN_OPS)));
        }
        List<CompletableFuture<TxnResponse>> checks = new ArrayList<>(chunks.size());
        chunks.forEach(chunk -> checks.add(check(chunk)));
        giveUpUnrenewed(start);
        leftovers.sweep();

        for (Map.Entry<Shared, CompletableFuture<LeaseKeepAliveResponse>> keepAlive : keepAlives.entrySet()) {
            Shared lease = keepAlive.getKey();
            try {
                EtcdCalls.retrying(keepAlive.getValue(), () -> leases.keepAlive(lease, System.nanoTime()), until,
                        "the keep-alive of " + lease);
            }
            catch (Exception ex) {
                if (!EtcdCalls.leaseGone(ex)) {
                    throw ex;
                }
                leases.retire(lease);
                lost.addAll(byLease.get(lease));
            }
        }
        for (int c = 0; c < chunks.size(); c++) {
            List<EtcdGrant> chunk = chunks.get(c);
            TxnResponse answer = EtcdCalls.retrying(checks.get(c), () -> check(chunk), until,
                    "the check of " + chunk.size() + " lease keys");
            if (!answer.isSucceeded()) {
                List<GetResponse> reads = answer.getGetResponses();
                for (int i = 0; i < chunk.size(); i++) {
                    EtcdGrant grant = chunk.get(i);
                    List<KeyValue> found = reads.get(i).getKvs();
                    if (found.isEmpty() || found.get(0).getCreateRevision() != grant.createRevision()) {
                        lost.add(grant);
                    }
                }
            }
        }
        return lost;
    }

    static Cmp stillOurs(EtcdGrant grant) {
        return new Cmp(grant.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(grant.createRevision()));
    }

    /** Read-only, so etcd answers it without a raft write: compares only, and the reads when one fails. */
    private CompletableFuture<TxnResponse> check(List<EtcdGrant> chunk) {
        return kv.txn().If(chunk.stream().map(Renewals::stillOurs).toArray(Cmp[]::new))
                .Else(chunk.stream().map(g -> Op.get(g.key(), GetOption.DEFAULT)).toArray(Op[]::new))
                .commit();
    }

    /**
     * Grants the engine has not asked to renew for longer than their ttl are lost to it, released or not (a holder
     * thread still running, a release that never came): their keys go, as they would with a lease of their own.
     */
    private void giveUpUnrenewed(long now) {
        holdings.takeGivenUp(now).forEach((grant, lease) -> {
            leftovers.grantLeft(grant);
            leases.leave(lease);
        });
    }
}
