package dev.lease.kubernetes;

import java.util.LinkedHashMap;
import java.util.Map;

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
