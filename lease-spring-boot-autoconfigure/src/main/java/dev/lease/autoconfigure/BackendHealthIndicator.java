package dev.lease.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.lease.Durations;
import dev.lease.LeaseKind;
import dev.lease.spi.LeaseBackend;

/**
 * The health of one backend in use, from its {@link LeaseBackend#checkHealth}, which never takes a lease: UP with
 * the backend's details, DOWN with its reason, or DOWN when it has not answered within {@code lease.health.timeout}.
 * Both carry the kinds the backend serves, which tells an operator which leases are affected.
 *
 * <p>A check still running when the next health request comes is waited for again rather than started anew, so a
 * backend that never answers costs one thread however often the health endpoint is polled.
 */
final class BackendHealthIndicator implements HealthIndicator {

    private final LeaseBackend<?> backend;
    private final List<LeaseKind> kinds;
    private final LeaseHealthChecks checks;
    private final AtomicReference<Check> running = new AtomicReference<>();

    BackendHealthIndicator(LeaseBackend<?> backend, List<LeaseKind> kinds, LeaseHealthChecks checks) {
        this.backend = backend;
        this.kinds = List.copyOf(kinds);
        this.checks = checks;
    }

    @Override
    public Health health() {
        Check check = currentOrNewCheck();
        try {
            Map<String, Object> details = check.result().get(checks.timeout().toNanos(), TimeUnit.NANOSECONDS);
            return Health.up().withDetails(details != null ? details : Map.of()).withDetail("kinds", kinds).build();
        }
        catch (ExecutionException ex) {
            return Health.down(ex.getCause()).withDetail("kinds", kinds).build();
        }
        catch (TimeoutException ex) {
            long runningNanos = System.nanoTime() - check.startedAt();
            String error = "no answer within " + Durations.format(checks.timeout());
            if (runningNanos > checks.timeout().toNanos() * 2) {
                error += " (the check started " + Durations.formatNanos(runningNanos) + " ago is still running)";
            }
            return Health.down().withDetail("error", error).withDetail("kinds", kinds).build();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return Health.down().withDetail("error", "interrupted while waiting for the " + backend.id()
                    + " health check").withDetail("kinds", kinds).build();
        }
    }

    private Check currentOrNewCheck() {
        Check current = running.get();
        if (current != null && !current.result().isDone()) {
            return current;
        }
        Check fresh = new Check(new CompletableFuture<>(), System.nanoTime());
        if (!running.compareAndSet(current, fresh)) {
            // Another health request started one meanwhile: wait for that one.
            return running.get();
        }
        try {
            checks.execute(() -> {
                try {
                    fresh.result().complete(backend.checkHealth(checks.timeout()));
                }
                catch (Throwable ex) {
                    fresh.result().completeExceptionally(ex);
                }
            });
        }
        catch (RejectedExecutionException closed) {
            fresh.result().completeExceptionally(new IllegalStateException(
                    "the application is shutting down: the " + backend.id() + " backend is no longer checked"));
        }
        return fresh;
    }

    @Override
    public String toString() {
        return "BackendHealthIndicator[" + backend.id() + ", " + kinds + "]";
    }

    /** One call of {@link LeaseBackend#checkHealth}, and when it started on the monotonic clock. */
    private record Check(CompletableFuture<Map<String, Object>> result, long startedAt) {
    }
}
