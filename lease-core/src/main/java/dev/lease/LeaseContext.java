package dev.lease;

import java.util.Optional;

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

    /** Installed by the engine before it binds the first lease to any thread; until then no thread holds one. */
    private static volatile Binding binding;

    private LeaseContext() {
    }

    /**
     * The innermost lease held by this thread.
     *
     * @return the lease of the innermost leased section this thread is in
     * @throws IllegalStateException when the thread is not inside a leased section
     */
    public static Lease current() {
        Binding installed = binding;
        Optional<Lease> innermost = installed == null ? Optional.empty() : installed.innermost();
        return innermost.orElseThrow(() -> new IllegalStateException(
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
        Binding installed = binding;
        return installed == null ? Optional.empty() : installed.find(name);
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

    /**
     * Internal, not for applications: installs where {@link LeaseContext} reads the current thread's leases from. The
     * engine ({@code dev.lease.core}), which binds leases to threads, installs its binding once, before it binds the
     * first lease; the contract does not depend on the engine that way.
     *
     * @param engineBinding the engine's binding
     * @throws IllegalStateException when a different binding is already installed
     */
    public static synchronized void install(Binding engineBinding) {
        if (binding != null && binding != engineBinding) {
            throw new IllegalStateException("A lease thread binding is already installed: " + binding);
        }
        binding = engineBinding;
    }

    /**
     * Internal, not for applications: the leases the current thread holds, as the engine bound them. Implemented by
     * the engine only; see {@link #install(Binding)}.
     */
    public interface Binding {

        /**
         * The innermost lease of the current thread.
         *
         * @return the lease, or empty outside any leased section
         */
        Optional<Lease> innermost();

        /**
         * The innermost lease of the current thread with this name.
         *
         * @param name the lease name, as evaluated
         * @return the lease, or empty when this thread holds none of that name
         */
        Optional<Lease> find(String name);
    }
}
