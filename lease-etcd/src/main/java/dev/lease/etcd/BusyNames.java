package dev.lease.etcd;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lease names this backend last found busy. A grant request for one of them first reads the key (serializable, no
 * quorum round, no write), and gives up at once while the key is there: a name held by another instance costs its
 * waiters one read per try, not a lease grant and a failed transaction each. A grant request for any other name goes
 * straight to the granting transaction: reading first would cost every uncontended grant one request more. A name
 * leaves the set when a read shows its key gone, when its deletion was watched, or when it is granted.
 */
final class BusyNames {

    /** Beyond this many names, the set starts again: each name costs at most one failed transaction more. */
    static final int MAX_NAMES = 10_000;

    private final Set<String> names = ConcurrentHashMap.newKeySet();

    void busy(String name) {
        if (names.size() >= MAX_NAMES) {
            names.clear();
        }
        names.add(name);
    }

    void free(String name) {
        names.remove(name);
    }

    boolean seenBusy(String name) {
        return names.contains(name);
    }
}
