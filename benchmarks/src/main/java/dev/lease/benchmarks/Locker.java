package dev.lease.benchmarks;

/**
 * One way of taking a named distributed lock, as one application instance would: ours through
 * {@code LeaseTemplate} or {@code @Leased}, or a peer library.
 */
interface Locker {

    /** Acquires {@code key}, waiting for it when someone else holds it (if the library can wait). */
    Held acquire(String key) throws Exception;

    /** Whether {@link #acquire} waits for a busy lock; ShedLock does not, it only skips. */
    default boolean canWait() {
        return true;
    }

    /** The acquired lock; closing releases it. */
    @FunctionalInterface
    interface Held extends AutoCloseable {
        @Override
        void close() throws Exception;
    }
}
