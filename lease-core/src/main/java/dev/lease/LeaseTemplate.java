package dev.lease;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Programmatic access to leases, for code that cannot use {@link Leased}. Available as a bean.
 *
 * <pre>{@code
 * leases.execute(LeaseSpec.of("nightly-report", LeaseKind.EFFICIENCY), lease -> report.run());
 * }</pre>
 */
public interface LeaseTemplate {

    /**
     * Acquires a lease, waiting up to {@link LeaseSpec#waitFor()}. The caller must close it; it is renewed in the
     * background until then, but no thread is interrupted when it is lost: check {@link Lease#isValid()} or
     * {@link Lease#checkValid()} before each step, or prefer {@link #execute}.
     *
     * @param spec the lease to acquire
     * @return the held lease, to close with try-with-resources
     * @throws LeaseUnavailableException when still held by someone else after the wait
     */
    Lease acquire(LeaseSpec spec);

    /**
     * Like {@link #acquire(LeaseSpec)}, but returns empty instead of throwing when the lease is busy.
     *
     * @param spec the lease to acquire
     * @return the held lease, or empty when it is still held by someone else after {@link LeaseSpec#waitFor()}
     * @throws LeaseUnavailableException when the backend failed until the wait was over, or the application is
     *         shutting down
     */
    Optional<Lease> tryAcquire(LeaseSpec spec);

    /**
     * Runs {@code work} while holding the lease, exactly like a {@link Leased} method: the lease is bound to the
     * thread, renewed, the thread is interrupted the moment it is lost, and it is released at the end.
     *
     * @param <T> the result type
     * @param spec the lease to hold
     * @param work what to run while holding it
     * @return what {@code work} returned
     * @throws LeaseUnavailableException when still held by someone else after {@link LeaseSpec#waitFor()}
     * @throws LeaseLostException when the lease was lost before {@code work} finished, whatever it returned
     */
    <T> T execute(LeaseSpec spec, LeaseCallback<T> work);

    /**
     * Runs {@code work} like {@link #execute}, the way the {@link Leased} interceptor calls it: whatever {@code work}
     * throws reaches the caller unchanged (checked exceptions included), and with a {@code whenBusy} a lease still
     * held by someone else after {@link LeaseSpec#waitFor()} returns its value ({@link WhenBusy#SKIP}) instead of
     * throwing. Re-entering a name this thread already holds reuses that lease. Every {@code @Leased} call goes
     * through the application's {@code LeaseTemplate} bean by this method, so a template that wraps another one
     * (to time or trace calls, say) delegates it.
     *
     * @param <T> the result type
     * @param spec the lease to hold
     * @param work what to run while holding it
     * @param whenBusy what to return when the lease is busy; null to throw {@link LeaseUnavailableException}
     * @return what {@code work} returned, or what {@code whenBusy} supplied
     * @throws LeaseUnavailableException when busy without a {@code whenBusy}, or the backend could not be reached
     * @throws LeaseLostException when the lease was lost before {@code work} finished, whatever it returned or threw
     * @throws Throwable what {@code work} threw, when the lease was kept
     */
    <T> T run(LeaseSpec spec, LeasedWork<T> work, Supplier<T> whenBusy) throws Throwable;
}
