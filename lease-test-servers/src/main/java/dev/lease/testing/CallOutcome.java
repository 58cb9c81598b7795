package dev.lease.testing;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * How a call running on another thread ended, for a test's failure message: a setup that waits for a holder to start
 * says why it never did (its grant failed, it is still waiting) instead of only "expected true".
 */
public final class CallOutcome {

    private CallOutcome() {
    }

    /** "still running", "returned …", "failed with …" or "cancelled"; never blocks. */
    public static String of(Future<?> call) {
        if (!call.isDone()) {
            return "still running";
        }
        try {
            return "returned " + call.get();
        }
        catch (ExecutionException ex) {
            return "failed with " + ex.getCause();
        }
        catch (CancellationException ex) {
            return "cancelled";
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "not read (interrupted)";
        }
    }
}
