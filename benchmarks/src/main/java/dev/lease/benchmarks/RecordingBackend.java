package dev.lease.benchmarks;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

/** Passes everything to a backend and notes renewals: how many, and when one first failed per lease name. */
final class RecordingBackend<G extends Grant> extends ForwardingLeaseBackend<G> {

    final LongAdder renewals = new LongAdder();
    final Map<String, Long> renewalFailedAt = new ConcurrentHashMap<>();

    RecordingBackend(LeaseBackend<G> target) {
        super(target);
    }

    @Override
    public boolean renew(G grant) throws Exception {
        renewals.increment();
        boolean renewed;
        try {
            renewed = target().renew(grant);
        }
        catch (Exception ex) {
            renewalFailedAt.putIfAbsent(grant.name(), System.nanoTime());
            throw ex;
        }
        if (!renewed) {
            renewalFailedAt.putIfAbsent(grant.name(), System.nanoTime());
        }
        return renewed;
    }

    /** Passed on as one call, so that the engine batches renewals through this wrapper as it would without it. */
    @Override
    public Set<G> renewAll(Collection<G> grants) throws Exception {
        renewals.add(grants.size());
        Set<G> lost;
        try {
            lost = target().renewAll(grants);
        }
        catch (Exception ex) {
            long now = System.nanoTime();
            grants.forEach(grant -> renewalFailedAt.putIfAbsent(grant.name(), now));
            throw ex;
        }
        long now = System.nanoTime();
        lost.forEach(grant -> renewalFailedAt.putIfAbsent(grant.name(), now));
        return lost;
    }
}
