package dev.lease.core;

import java.time.Instant;
import java.util.Objects;

import dev.lease.LeaseKind;

/**
 * Callers of one {@link LeaseEngine} waiting for a name, as they stood at one instant ({@link LeaseEngine#waiting()}):
 * what an operator asks on the instance that is not getting a lease ("who waits, for what, since when").
 *
 * @param name the lease name, as evaluated
 * @param kind the lease kind
 * @param backend the id of the backend asked for it
 * @param since when the longest-waiting of these callers started waiting, on the wall clock (for reading only:
 *        nothing about validity is measured with it)
 * @param threads how many callers wait for it now
 */
public record WaitingSnapshot(String name, LeaseKind kind, String backend, Instant since, int threads) {

    /**
     * Checks that every component is present and that someone waits.
     *
     * @throws NullPointerException naming the missing component
     * @throws IllegalArgumentException when {@code threads} is not positive
     */
    public WaitingSnapshot {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(since, "since");
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive, was " + threads);
        }
    }
}
