package dev.lease.kubernetes;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;

/**
 * Per Lease object: the resourceVersion this instance last read of a Lease held by someone else, and when it first
 * read that version on this JVM's monotonic clock. A competitor judges expiry from it.
 *
 * <p>Bounded, because lease names may be per entity ({@code invoice-42}) and a caller may give up on a busy name and
 * never come back. Forgetting an observation is always safe: the next read starts a new one, so a competitor only
 * waits longer before it takes over, never less. Entries are dropped when the object is granted here or read free
 * (nobody waits on it any more), and beyond {@code limit} the least recently read are dropped, which can only delay
 * a takeover of a name nobody here has looked at for the longest.
 */
final class Observations {

    private final int limit;
    private final Map<String, Observed> byObject;

    Observations(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("observation limit must be positive: " + limit);
        }
        this.limit = limit;
        this.byObject = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Observed> eldest) {
                return size() > Observations.this.limit;
            }
        };
    }

    /** When this instance first read {@code version} of the object, {@code readAt} when it is new. */
    synchronized long firstSeenAt(String objectName, String version, long readAt) {
        Observed old = byObject.get(objectName);
        if (old != null && old.resourceVersion().equals(version)) {
            return old.firstSeenAt();
        }
        byObject.put(objectName, new Observed(version, readAt));
        return readAt;
    }

    /** The resourceVersion last read of a held object, null when none is kept. */
    synchronized String version(String objectName) {
        Observed seen = byObject.get(objectName);
        return seen == null ? null : seen.resourceVersion();
    }

    /**
     * Whether the Lease is held by someone (us included: this instance's grants are not re-entrant) and not yet
     * expired as observed here: unchanged since our first read of this resourceVersion for less than its duration
     * plus {@link #takeoverMarginNanos}. A free object is forgotten (a later holder is observed afresh).
     *
     * @param readAt when the read of {@code current} returned, on this JVM's monotonic clock
     * @param ttl the requested ttl, the duration of a holder that wrote none
     */
    boolean heldUnexpired(String objectName, Lease current, long readAt, Duration ttl) {
        LeaseSpec spec = current.getSpec();
        if (spec == null || spec.getHolderIdentity() == null || spec.getHolderIdentity().isEmpty()) {
            forget(objectName);
            return false;
        }
        long firstSeenAt = firstSeenAt(objectName, current.getMetadata().getResourceVersion(), readAt);
        Integer seconds = spec.getLeaseDurationSeconds();
        // A holder that wrote no (or no positive) duration is given our own ttl, rounded up as we would write it.
        long durationNanos = TimeUnit.SECONDS.toNanos(seconds != null && seconds > 0 ? seconds
                : LeaseObjects.durationSeconds(ttl));
        return readAt - firstSeenAt < durationNanos + takeoverMarginNanos(durationNanos);
    }

    /**
     * How much longer than the lease duration a competitor waits before it takes over: a tenth of the duration, at
     * least one second. Without it, a ttl of whole seconds leaves the holder's validity and the takeover apart only by
     * the request's latency, and safety would rest on the two monotonic clocks running at exactly the same rate. Clocks
     * kept by NTP differ in rate by well under 0.1%, so a tenth leaves room for far worse ones (a drifting VM clock);
     * the second covers what a share of a short lease cannot: timer and scheduling delays on a loaded host, and the
     * holder's thread noticing the end of its validity. It only ever delays a takeover, never a release.
     */
    static long takeoverMarginNanos(long durationNanos) {
        return Math.max(TimeUnit.SECONDS.toNanos(1), durationNanos / 10);
    }

    synchronized void forget(String objectName) {
        byObject.remove(objectName);
    }

    synchronized int size() {
        return byObject.size();
    }

    /** A resourceVersion of one Lease object as first read here, on this JVM's monotonic clock. */
    private record Observed(String resourceVersion, long firstSeenAt) {
    }
}
