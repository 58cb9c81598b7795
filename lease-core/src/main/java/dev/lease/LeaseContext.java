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

    /** Installed by the engine before it binds the first lease; until then no thread holds one. */
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
     * The fencing token of the innermost lease of this thread whose backend issues tokens: what a write to a fenced
     * resource made from here should carry. Unlike {@link #token()}, it looks past an inner lease without a token
     * (an EFFICIENCY lease on Redis inside a CORRECTNESS one).
     *
     * @return the token, or empty outside a leased section or when no lease of this thread has one
     */
    public static Optional<FencingToken> findToken() {
        Binding installed = binding;
        return installed == null ? Optional.empty() : installed.innermostWithToken().map(Lease::token);
    }

    /**
     * Internal: the engine ({@code dev.lease.core}) installs its thread binding once, before it binds a lease.
     *
     * @param engineBinding the engine's binding
     * @throws IllegalStateException when another binding is installed already
     */
    public static synchronized void install(Binding engineBinding) {
        if (binding != null && binding != engineBinding) {
            throw new IllegalStateException("A lease thread binding is installed already: " + binding);
        }
        binding = engineBinding;
    }

    /** Internal: the current thread's leases as the engine bound them; see {@link #install(Binding)}. */
    public interface Binding {

        /** @return the innermost lease of the current thread, if any */
        Optional<Lease> innermost();

        /**
         * @param name the lease name, as evaluated
         * @return the innermost lease of the current thread with this name, if any
         */
        Optional<Lease> find(String name);

        /**
         * @return the innermost lease of the current thread whose backend issues tokens, if any; by default the
         *         innermost lease when it has a token
         */
        default Optional<Lease> innermostWithToken() {
            return innermost().filter(Lease::hasToken);
        }
    }
}
