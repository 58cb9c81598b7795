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
     * @return the result handed to the caller of {@code execute}
     * @throws Exception anything; {@code execute} passes unchecked exceptions on as they are and wraps checked ones
     *         in {@link java.lang.reflect.UndeclaredThrowableException}. When the lease was lost meanwhile, the caller
     *         gets {@link LeaseLostException} with it as the cause instead.
     */
    T doInLease(Lease lease) throws Exception;
}
