package dev.lease.spi;

import java.time.Duration;
import java.util.Optional;

import dev.lease.FencingToken;

/**
 * Where {@link dev.lease.Once} keys are recorded: a table beside the application's data, written in the same
 * transaction as the work, so that the key commits if and only if the work's writes do.
 * {@code dev.lease.once.JdbcOnceStore} implements it over a DataSource and its transaction manager.
 */
public interface OnceStore {

    /**
     * In a transaction of the store (the active one, else a new one, committed when {@code work} returns and rolled
     * back when it throws), records {@code key}, then runs {@code work}; or, when the key is already committed, runs
     * nothing.
     *
     * @param key the evaluated key
     * @param token the token of the innermost lease of the thread, if any, kept with the key
     * @param wait how long to wait for another open transaction recording the same key
     * @param work the body
     * @return whether the work ran ({@code false}: the key was committed before)
     * @throws dev.lease.LeaseUnavailableException when another transaction kept recording the key for {@code wait}
     * @throws Throwable what {@code work} throws
     */
    boolean runOnce(String key, Optional<FencingToken> token, Duration wait, Work work) throws Throwable;

    /**
     * Checks, at startup, that the store's table can be read and that a transaction of the store can be had, so
     * that a missing table or transaction manager fails the startup and not the first call.
     *
     * @param users the methods that need it, for messages
     * @throws dev.lease.LeaseConfigurationException when it cannot, naming the fix
     */
    void verify(String users);

    /** The body of a call: what {@code MethodInvocation.proceed()} does. */
    @FunctionalInterface
    interface Work {

        /**
         * Runs the body.
         *
         * @throws Throwable what the body throws
         */
        void run() throws Throwable;
    }
}
