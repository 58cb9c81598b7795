package dev.lease.etcd;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.lease.etcd.SharedLeases.Shared;

/**
 * The grants this backend holds: each with the shared etcd lease its key is bound to, and when its last renewal (or
 * its grant request) started. The engine extends a lease's validity by at most its ttl from the start of a renewal
 * call, and never after that validity ran out; so a grant not renewed for longer than its ttl is one the engine no
 * longer believes in, whatever became of its release, and its key may go.
 */
final class Holdings {

    private record Holding(Shared lease, long coveredFrom) {
    }

    private final Map<EtcdGrant, Holding> held = new ConcurrentHashMap<>();

    /** The grant is held from {@code from} (System.nanoTime before its request was sent). */
    void add(EtcdGrant grant, Shared lease, long from) {
        held.put(grant, new Holding(lease, from));
    }

    /** No longer held; its lease, or null when it was not held (released before, or given up on). */
    Shared remove(EtcdGrant grant) {
        Holding holding = held.remove(grant);
        return holding == null ? null : holding.lease();
    }

    /**
     * A renewal of the grant starts at {@code from}.
     *
     * @return the grant's lease, or null when it is not held
     */
    Shared renewing(EtcdGrant grant, long from) {
        Holding holding = held.computeIfPresent(grant, (g, h) -> from - h.coveredFrom() > 0
                ? new Holding(h.lease(), from) : h);
        return holding == null ? null : holding.lease();
    }

    /** Takes out the grants whose last renewal started more than their ttl before {@code now}. */
    Map<EtcdGrant, Shared> takeGivenUp(long now) {
        Map<EtcdGrant, Shared> givenUp = new LinkedHashMap<>();
        held.forEach((grant, holding) -> {
            if (now - holding.coveredFrom() - TimeUnit.SECONDS.toNanos(grant.ttlSeconds()) > 0
                    && held.remove(grant, holding)) {
                givenUp.put(grant, holding.lease());
            }
        });
        return givenUp;
    }

    /** How many grants are held; for tests. */
    int size() {
        return held.size();
    }
}
