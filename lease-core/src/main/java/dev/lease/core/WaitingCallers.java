package dev.lease.core;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.lease.LeaseKind;

/**
 * The callers of one engine that wait for a name (an acquire with a {@code waitFor}, until it is granted or gives
 * up), for {@link LeaseEngine#waiting()}. A caller that does not wait asks once and is never listed. Costs one map
 * update when a wait starts and one when it ends; names nobody waits for take no room.
 */
final class WaitingCallers {

    private final Map<Key, Set<Waiter>> waiting = new ConcurrentHashMap<>();
    private final Clock clock;

    WaitingCallers(Clock clock) {
        this.clock = clock;
    }

    /** The calling thread starts waiting for the request's name; run the returned action when it stops. */
    Runnable enter(LeaseRequest request) {
        Key key = new Key(request.name(), request.kind(), request.backend().id());
        Waiter waiter = new Waiter(clock.instant());
        waiting.compute(key, (k, waiters) -> {
            Set<Waiter> used = waiters != null ? waiters : ConcurrentHashMap.newKeySet();
            used.add(waiter);
            return used;
        });
        return () -> waiting.computeIfPresent(key, (k, waiters) -> {
            waiters.remove(waiter);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** The names waited for now, sorted by name; each read on its own. */
    List<WaitingSnapshot> snapshots() {
        return waiting.entrySet().stream().map(entry -> {
            List<Waiter> waiters = List.copyOf(entry.getValue());
            if (waiters.isEmpty()) {
                return null;
            }
            Instant since = waiters.stream().map(Waiter::since).min(Comparator.naturalOrder()).orElseThrow();
            Key key = entry.getKey();
            return new WaitingSnapshot(key.name(), key.kind(), key.backend(), since, waiters.size());
        }).filter(Objects::nonNull)
                .sorted(Comparator.comparing(WaitingSnapshot::name).thenComparing(WaitingSnapshot::kind)).toList();
    }

    private record Key(String name, LeaseKind kind, String backend) {
    }

    /** One waiting caller; compared by identity, so two callers that started in the same instant both count. */
    private static final class Waiter {

        private final Instant since;

        Waiter(Instant since) {
            this.since = since;
        }

        Instant since() {
            return since;
        }
    }
}
