package dev.lease.core;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

import dev.lease.LeaseKind;

/**
 * A lease a {@link LeaseEngine} holds, as it stood at one instant ({@link LeaseEngine#held()}): what an operator
 * asks about ("who holds what, and for how much longer"), with nothing that could act on the lease.
 *
 * @param name the lease name, as evaluated (for {@code @Leased}, after the name template ran)
 * @param kind the lease kind
 * @param backend the id of the backend that granted it, such as {@code zookeeper}
 * @param token the fencing token of the grant; empty on a backend that issues none
 * @param remaining how long the lease stays valid locally unless renewed, on the monotonic clock; always positive
 * @param thread the name of the thread running the leased section, or null when the lease is not bound to one (it
 *        was taken with {@link dev.lease.LeaseTemplate#acquire} or {@link dev.lease.LeaseTemplate#tryAcquire})
 */
public record HeldLeaseSnapshot(String name, LeaseKind kind, String backend, OptionalLong token, Duration remaining,
        String thread) {

    /**
     * Checks that every component but {@code thread} is present.
     *
     * @throws NullPointerException naming the missing component
     */
    public HeldLeaseSnapshot {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(remaining, "remaining");
    }
}
