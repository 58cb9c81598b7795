package dev.lease.core;

import dev.lease.Lease;

/**
 * Work run inside a leased section by {@link LeaseEngine#run}; unlike {@link dev.lease.LeaseCallback} it may throw
 * anything, so an intercepted method's exceptions pass through unchanged.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LeasedWork<T> {

    /** Does the work while {@code lease} is held. */
    T run(Lease lease) throws Throwable;
}
