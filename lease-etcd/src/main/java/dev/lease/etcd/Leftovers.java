package dev.lease.etcd;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;

/**
 * Keys that nobody holds but that a shared etcd lease, kept alive by other grants, would keep: a key whose release
 * failed, the key of a grant the engine gave up on without releasing it, a key a grant request abandoned may still
 * create. With a lease of its own, each would go with its ttl; on a shared lease, they are deleted here, each only if
 * it is still exactly that key (its create_revision, or the abandoned request's attempt id as its value), never a
 * successor's. The deletions go out with every renewal round (the rounds run exactly while someone keeps the shared
 * lease alive); when the lease is revoked, its keys go with it and are forgotten here.
 */
final class Leftovers {

    /**
     * @param untilLeaseGoes true for an abandoned request: its transaction may still arrive, so the key is looked for
     *        again at every round until the lease is gone; false for a grant: once its key is gone it cannot come back
     */
    private record Leftover(ByteSequence key, Cmp stillIt, long leaseId, boolean untilLeaseGoes) {
    }

    private final KV kv;
    private final long callTimeoutNanos;
    /** Each leftover, and whether a deletion of it is on its way. */
    private final Map<Leftover, Boolean> waiting = new ConcurrentHashMap<>();

    Leftovers(KV kv, long callTimeoutNanos) {
        this.kv = kv;
        this.callTimeoutNanos = callTimeoutNanos;
    }

    /** The grant's key, if it still has the grant's create_revision. */
    void grantLeft(EtcdGrant grant) {
        waiting.putIfAbsent(new Leftover(grant.key(), new Cmp(grant.key(), Cmp.Op.EQUAL,
                CmpTarget.createRevision(grant.createRevision())), grant.leaseId(), false), false);
    }

    /** The key, whenever it holds the abandoned request's attempt id, until the lease is gone. */
    void attemptLeft(ByteSequence key, ByteSequence attempt, long leaseId) {
        waiting.putIfAbsent(new Leftover(key, new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(attempt)), leaseId, true),
                false);
    }

    /** The lease was revoked: the keys bound to it went with it. */
    void leaseGone(long leaseId) {
        waiting.keySet().removeIf(leftover -> leftover.leaseId() == leaseId);
    }

    /** Sends a conditional deletion of every leftover that has none on its way; does not wait for the answers. */
    void sweep() {
        for (Leftover leftover : waiting.keySet()) {
            if (!waiting.replace(leftover, false, true)) {
                continue;
            }
            kv.txn().If(leftover.stillIt()).Then(Op.delete(leftover.key(), DeleteOption.DEFAULT)).commit()
                    .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
                    .whenComplete((answer, error) -> {
                        if (error == null && !leftover.untilLeaseGoes()) {
                            waiting.remove(leftover);
                        }
                        else {
                            waiting.replace(leftover, true, false);
                        }
                    });
        }
    }

    /** How many keys wait to be deleted; for tests. */
    int size() {
        return waiting.size();
    }
}
