package dev.lease.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Coalesces renewals that arrive within a short window into one request. The engine renews each lease on its
 * own schedule from a small pool; without this, an instance holding many leases would pay one round trip per
 * lease per tick.
 *
 * <p>The first caller of a batch becomes its leader: it waits out the window (if any), then for the answer to the
 * request still in flight (if any), closes the batch and sends it, while later callers join the open batch and
 * wait for its answer. So a lone renewal goes out at once, and under load renewals gather while the previous
 * request travels ("group commit"), with no fixed pause that would cap how many renewals a few threads can
 * send per second. Each caller gets the answer for its own grant; a failed request fails every caller of that
 * batch, as one failed renewal each would.
 */
final class RenewalBatcher {

    /** Sends one batch; returns one answer per grant, in order. */
    @FunctionalInterface
    interface BatchRenewer {
        boolean[] renewAll(List<RedisGrant> grants);
    }

    private final BatchRenewer renewer;
    private final long windowNanos;
    private final int maxBatch;

    private final Object lock = new Object();
    private Batch open;
    /** The batch whose request was sent last and has not been answered yet, if any. */
    private Batch inFlight;

    RenewalBatcher(BatchRenewer renewer, Duration window, int maxBatch) {
        this.renewer = renewer;
        this.windowNanos = window.toNanos();
        this.maxBatch = maxBatch;
    }

    boolean renew(RedisGrant grant) throws InterruptedException {
        Batch batch;
        int index;
        boolean leader = false;
        synchronized (lock) {
            if (open == null || open.grants.size() >= maxBatch) {
                open = new Batch();
                leader = true;
            }
            batch = open;
            index = batch.grants.size();
            batch.grants.add(grant);
        }
        if (leader) {
            lead(batch);
        }
        try {
            return batch.answers.get()[index];
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException("Renewal of lease '" + grant.name() + "' failed", ex.getCause());
        }
    }

    /** The lease names of the batch whose request is in flight, its leader's first; empty if none. For tests. */
    List<String> inFlightNames() {
        synchronized (lock) {
            return inFlight == null ? List.of() : inFlight.grants.stream().map(RedisGrant::name).toList();
        }
    }

    /** How many renewals wait in the batch that is still open; for tests. */
    int openBatchSize() {
        synchronized (lock) {
            return open == null ? 0 : open.grants.size();
        }
    }

    private void lead(Batch batch) {
        boolean interrupted = false;
        if (windowNanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(windowNanos);
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        synchronized (lock) {
            // Gather while the previous request travels; a full batch goes out anyway (the connection pipelines).
            while (inFlight != null && batch.grants.size() < maxBatch) {
                try {
                    lock.wait();
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
            if (open == batch) {
                open = null;
            }
            inFlight = batch;
        }
        // The other callers depend on this request: it is sent even if the leader's own renewal was cancelled,
        // with the interrupt set aside so that the client does not abort it.
        interrupted |= Thread.interrupted();
        try {
            boolean[] answers = renewer.renewAll(List.copyOf(batch.grants));
            if (answers.length != batch.grants.size()) {
                throw new IllegalStateException("Redis answered " + answers.length + " renewals for "
                        + batch.grants.size() + " leases");
            }
            batch.answers.complete(answers);
        }
        catch (RuntimeException | Error ex) {
            batch.answers.completeExceptionally(ex);
        }
        finally {
            synchronized (lock) {
                inFlight = null;
                lock.notifyAll();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final class Batch {
        // Only modified under the batcher's lock while the batch is open, only read once it is closed.
        final List<RedisGrant> grants = new ArrayList<>();
        final CompletableFuture<boolean[]> answers = new CompletableFuture<>();
    }
}
