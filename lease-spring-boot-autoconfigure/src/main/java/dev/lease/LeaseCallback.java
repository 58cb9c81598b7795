package dev.lease;

/**
 * Work to run while holding a lease, for {@link LeaseTemplate#execute(LeaseSpec, LeaseCallback)}.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LeaseCallback<T> {

    /**
     * Does the work. Blocking calls should let {@link InterruptedException} propagate: an interrupt means the
     * lease was lost and the work must stop now.
     *
     * @param lease the held lease, also available from {@link LeaseContext}
     */
    T doInLease(Lease lease) throws Exception;
}
