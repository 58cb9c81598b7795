package dev.lease.testing;

import java.util.Optional;

import dev.lease.Lease;
import dev.lease.LeaseContext;

/**
 * Assertions that code ran under a lease, to call from code the test runs inside the section (a callback, a test
 * double of a collaborator, a test bean's {@code @Leased} method), the way ShedLock's {@code LockAssert} is used: a
 * test then proves that the method really is leased, whatever proxies and configuration stand between the test and
 * the method. Failures are {@link AssertionError}s, so the assertions need no test library.
 *
 * <pre>{@code
 * when(reports.write(any())).thenAnswer(call -> {
 *     LeaseAssert.assertLeased("nightly-report");
 *     return true;
 * });
 * scheduler.nightlyReport(); // a @Leased(name = "nightly-report") method that calls reports.write
 * }</pre>
 */
public final class LeaseAssert {

    private LeaseAssert() {
    }

    /**
     * Asserts that this thread holds a valid lease named {@code name}, and returns it.
     *
     * @param name the evaluated lease name ({@code invoice-42}, not {@code invoice-#{#id}})
     * @return the held lease, to check its token for instance
     * @throws AssertionError when this thread holds no such lease, or holds it no longer
     */
    public static Lease assertLeased(String name) {
        Lease lease = LeaseContext.find(name).orElseThrow(() -> new AssertionError(
                "expected to run under lease '" + name + "', but this thread holds " + held()));
        if (!lease.isValid()) {
            throw new AssertionError("lease '" + name + "' is held by this thread but no longer valid (lost or "
                    + "expired): " + lease);
        }
        return lease;
    }

    /**
     * Asserts that this thread holds at least one valid lease, and returns the innermost one.
     *
     * @throws AssertionError when it holds none
     */
    public static Lease assertLeased() {
        Lease innermost = innermost().orElseThrow(
                () -> new AssertionError("expected to run under a lease, but this thread holds none"));
        return assertLeased(innermost.name());
    }

    /**
     * Asserts that this thread holds no lease named {@code name}.
     *
     * @throws AssertionError when it does
     */
    public static void assertNotLeased(String name) {
        LeaseContext.find(name).ifPresent(lease -> {
            throw new AssertionError("expected not to run under lease '" + name + "', but this thread holds " + lease);
        });
    }

    private static String held() {
        return innermost().map(lease -> "only " + lease + " (innermost)").orElse("no lease at all");
    }

    private static Optional<Lease> innermost() {
        try {
            return Optional.of(LeaseContext.current());
        }
        catch (IllegalStateException none) {
            return Optional.empty();
        }
    }
}
