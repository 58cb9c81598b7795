package dev.lease;

/**
 * Work run inside a leased section by {@link LeaseTemplate#run}; unlike {@link LeaseCallback} it may throw anything,
 * so that the exceptions of an intercepted method reach its caller unchanged.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LeasedWork<T> {

    /**
     * Does the work while {@code lease} is held.
     *
     * @param lease the held lease, also available from {@link LeaseContext}
     * @return the result handed to the caller of {@code run}
     * @throws Throwable anything, passed on unchanged unless the lease was lost meanwhile
     */
    T run(Lease lease) throws Throwable;
}
