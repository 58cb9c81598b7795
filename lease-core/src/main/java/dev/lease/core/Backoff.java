package dev.lease.core;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Growing, jittered pauses between attempts on a busy lease. The backend usually wakes the waiter on release
 * well before a pause ends; the pause only bounds the cost of a missed notification, and the jitter keeps many
 * waiters from retrying in lock step.
 */
final class Backoff {

    private static final long FIRST_NANOS = 20_000_000L;
    private static final long MAX_NANOS = 1_000_000_000L;

    private long current = FIRST_NANOS;

    long nextNanos() {
        long pause = current / 2 + ThreadLocalRandom.current().nextLong(current / 2 + 1);
        current = Math.min(MAX_NANOS, current * 2);
        return pause;
    }
}
