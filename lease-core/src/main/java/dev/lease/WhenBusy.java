package dev.lease;

/**
 * What a {@link Leased} method does when the lease is still held by someone else after
 * {@link Leased#waitFor()}.
 */
public enum WhenBusy {

    /** Throw {@link LeaseUnavailableException}: the caller must know the work did not run. */
    THROW,

    /**
     * Do not run the method and return "nothing": {@code null}, {@code Optional.empty()}, or simply return for a
     * {@code void} method. Meant for jobs that several instances trigger and only one needs to run, such as a
     * {@code @Scheduled} report. An {@code @Async} method returning a future gives its caller a future completed
     * with {@code null}. A method returning a primitive cannot express "nothing" and is refused at startup.
     */
    SKIP
}
