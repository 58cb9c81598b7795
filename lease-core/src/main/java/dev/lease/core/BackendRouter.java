package dev.lease.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.spi.LeaseBackend;

/**
 * Which backend serves each {@link LeaseKind}: fixed routes, given by a plain Spring configuration or chosen by the
 * auto-configuration from the {@code lease.*backend} properties. A {@code CORRECTNESS} lease is refused on a backend
 * that issues no fencing tokens.
 */
public final class BackendRouter {

    private final Map<LeaseKind, LeaseBackend<?>> routes;

    private BackendRouter(Map<LeaseKind, LeaseBackend<?>> routes) {
        this.routes = routes;
    }

    /** A router with fixed routes; a kind without a route cannot be leased. */
    public static BackendRouter of(Map<LeaseKind, LeaseBackend<?>> routes) {
        return new BackendRouter(routes.isEmpty() ? new EnumMap<>(LeaseKind.class) : new EnumMap<>(routes));
    }

    /**
     * The backend serving {@code kind}.
     *
     * @throws LeaseConfigurationException when no backend serves it, or CORRECTNESS would go to a backend that
     *         issues no fencing tokens
     */
    public LeaseBackend<?> backendFor(LeaseKind kind) {
        LeaseBackend<?> backend = routes.get(kind);
        if (backend == null) {
            throw new LeaseConfigurationException("No lease backend serves " + kind + " leases.",
                    "set lease." + kind.name().toLowerCase() + "-backend or lease.backend.");
        }
        if (kind == LeaseKind.CORRECTNESS) {
            requireFenced(backend, "CORRECTNESS leases routed to " + backend.id());
        }
        return backend;
    }

    /** The backend configured for {@code kind}, without the fencing check. */
    public Optional<LeaseBackend<?>> routeOf(LeaseKind kind) {
        return Optional.ofNullable(routes.get(kind));
    }

    /** One line for the startup log: which backend serves each kind, and whether it fences. */
    public String describe() {
        return routes.entrySet().stream()
                .map(e -> e.getKey() + " -> " + (e.getValue() == null ? "(none)" : e.getValue().id()
                        + (e.getValue().traits().issuesFencingTokens() ? " (fencing tokens)"
                                : " (no fencing tokens: " + (e.getKey() == LeaseKind.CORRECTNESS ? "refused"
                                        : "a duplicate run stays possible") + ")")))
                .collect(Collectors.joining(", "));
    }

    private static void requireFenced(LeaseBackend<?> backend, String culprit) {
        Optional<String> whyNotFenced = backend.traits().whyNotFenced();
        if (whyNotFenced.isPresent()) {
            throw new LeaseConfigurationException(
                    culprit + " cannot work: " + whyNotFenced.get()
                            + ", so a holder that pauses past its lease could still write after the next holder.",
                    "route CORRECTNESS leases to a fenced backend with lease.correctness-backend: zookeeper (or jdbc), "
                            + "or declare the work kind = EFFICIENCY if a rare duplicate is harmless.");
        }
    }
}
