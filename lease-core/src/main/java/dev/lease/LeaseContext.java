package dev.lease;

import java.util.Optional;

import dev.lease.core.ThreadLeases;

/**
 * The leases held by the current thread while it runs a leased section ({@link Leased} method or
 * {@link LeaseTemplate#execute}). Sections nest: {@link #current()} is the innermost, {@link #find(String)}
 * reaches outer ones.
 *
 * <p>The typical use is reading the fencing token to send with a write:
 * <pre>{@code
 * fence.advance("accounts", LeaseContext.token());
 * }</pre>
 */
public final class LeaseContext {

    private LeaseContext() {
    }

    /**
     * The innermost lease held by this thread.
     *
     * @return the lease of the innermost leased section this thread is in
     * @throws IllegalStateException when the thread is not inside a leased section
     */
    public static Lease current() {
        return ThreadLeases.innermost().orElseThrow(() -> new IllegalStateException(
                "No lease is bound to thread '" + Thread.currentThread().getName()
                        + "': LeaseContext only works inside a @Leased method or LeaseTemplate.execute(...)"));
    }

    /**
     * The lease with this name held by this thread, if any (innermost first).
     *
     * @param name the lease name, as evaluated (not the {@code #{...}} template)
     * @return the lease, or empty when this thread holds none of that name
     */
    public static Optional<Lease> find(String name) {
        return ThreadLeases.find(name);
    }

    /**
     * The fencing token of the innermost lease: {@code current().token()}.
     *
     * @return the token to send with a write to the fenced resource
     * @throws IllegalStateException outside a leased section, or when the lease's backend issues no tokens
     */
    public static FencingToken token() {
        return current().token();
    }
}
