package dev.lease;

import java.time.Duration;

/**
 * The lease could not be had: it was still held by someone else after waiting as long as allowed, or the backend
 * could not be asked (then the cause says why, and the message says the store could not be reached). The work did
 * not run. A caller waits at most its {@code waitFor}, or one second for a single request when that is longer, plus
 * scheduling delays, even while the store is unreachable.
 */
public class LeaseUnavailableException extends RuntimeException {

    /** The name of the lease that could not be had. */
    private final String lease;

    /** How long the caller waited, zero when it did not. */
    private final Duration waited;

    /**
     * A lease still held by someone else after the wait.
     *
     * @param lease the lease name
     * @param waited how long the caller waited
     * @param backend the backend that was asked
     */
    public LeaseUnavailableException(String lease, Duration waited, String backend) {
        this(lease, waited, backend, null);
    }

    /**
     * A lease that is busy, or that the backend could not grant because it failed.
     *
     * @param lease the lease name
     * @param waited how long the caller was willing to wait
     * @param backend the backend that was asked
     * @param cause why the backend could not answer (unreachable, interrupted), or null when the lease is busy
     */
    public LeaseUnavailableException(String lease, Duration waited, String backend, Throwable cause) {
        super(cause == null
                ? "Lease " + quoted(lease) + " is held by someone else (backend " + backend + ", waited "
                        + Durations.format(waited)
                        + "); raise waitFor, or use whenBusy = SKIP if the work may simply be skipped"
                : cause instanceof InterruptedException
                        ? "Lease " + quoted(lease) + " could not be acquired from backend " + backend + ": " + cause
                        // Said plainly, so that an outage is never mistaken for contention (or the reverse).
                        : "Lease " + quoted(lease) + " could not be acquired: the " + backend + " store could not be "
                                + "reached or failed (waitFor " + Durations.format(waited) + "): " + cause, cause);
        this.lease = lease;
        this.waited = waited;
    }

    /**
     * A lease that could not be had for a reason other than being busy or the backend failing.
     *
     * @param lease the lease name
     * @param backend the backend that would have been asked
     * @param reason why no grant was requested, such as the application shutting down
     */
    public LeaseUnavailableException(String lease, String backend, String reason) {
        super("Lease " + quoted(lease) + " could not be acquired from backend " + backend + ": " + reason);
        this.lease = lease;
        this.waited = Duration.ZERO;
    }

    private LeaseUnavailableException(String key, Duration waited, String message, Throwable cause, boolean once) {
        super(message, cause);
        this.lease = key;
        this.waited = waited;
    }

    /**
     * A {@link Once} key that another open transaction kept recording for as long as the call could wait: that
     * transaction's run of the same work has neither committed nor rolled back yet.
     *
     * @param key the evaluated key, which {@link #lease()} returns
     * @param waited how long the call waited for that transaction
     * @param cause the database's lock timeout
     * @return the exception
     */
    public static LeaseUnavailableException onceKeyBusy(String key, Duration waited, Throwable cause) {
        return new LeaseUnavailableException(key, waited, "@Once key " + quoted(key) + " is being recorded by another "
                + "open transaction (a run of the same work that has neither committed nor rolled back after "
                + Durations.format(waited) + "); the work did not run. It runs on a later call if that transaction "
                + "rolls back; raise lease.once.wait (or the lease's ttl) if runs last longer", cause, true);
    }

    private static String quoted(String lease) {
        return "'" + Printable.text(lease) + "'";
    }

    /**
     * The name of the lease that could not be had.
     *
     * @return the lease name
     */
    public String lease() {
        return lease;
    }

    /**
     * How long the caller waited before giving up.
     *
     * @return the wait, {@link Duration#ZERO} when it did not wait or no grant was requested
     */
    public Duration waited() {
        return waited;
    }
}
