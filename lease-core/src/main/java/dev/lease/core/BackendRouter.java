package dev.lease.core;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.spi.LeaseBackend;

/**
 * Which backend serves each {@link LeaseKind}, chosen once from the available backends and the
 * {@code lease.backend}, {@code lease.correctness-backend} and {@code lease.efficiency-backend} properties.
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
     * Picks the routes from configuration.
     *
     * @param available every backend whose client is present and configured
     * @param backend {@code lease.backend}, may be null
     * @param correctness {@code lease.correctness-backend}, may be null
     * @param efficiency {@code lease.efficiency-backend}, may be null
     * @throws LeaseConfigurationException for an unknown or unavailable id, an ambiguous choice, no backend at
     *         all, or CORRECTNESS routed explicitly to a backend without fencing tokens
     */
    public static BackendRouter select(List<LeaseBackend<?>> available, String backend, String correctness,
            String efficiency) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        LeaseBackend<?> common = isSet(backend) ? pick(available, "lease.backend", backend) : null;
        if (common == null && !(isSet(correctness) && isSet(efficiency))) {
            common = onlyOne(available);
        }
        routes.put(LeaseKind.CORRECTNESS,
                isSet(correctness) ? pick(available, "lease.correctness-backend", correctness) : common);
        routes.put(LeaseKind.EFFICIENCY,
                isSet(efficiency) ? pick(available, "lease.efficiency-backend", efficiency) : common);
        if (isSet(correctness)) {
            requireFenced(routes.get(LeaseKind.CORRECTNESS), "lease.correctness-backend=" + correctness);
        }
        return new BackendRouter(routes);
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
                        + (e.getValue().issuesFencingTokens() ? " (fencing tokens)"
                                : " (no fencing tokens: " + (e.getKey() == LeaseKind.CORRECTNESS ? "refused"
                                        : "a duplicate run stays possible") + ")")))
                .collect(Collectors.joining(", "));
    }

    private static void requireFenced(LeaseBackend<?> backend, String culprit) {
        if (!backend.issuesFencingTokens()) {
            throw new LeaseConfigurationException(
                    culprit + " cannot work: " + backend.whyNotFenced()
                            + ", so a holder that pauses past its lease could still write after the next holder.",
                    "route CORRECTNESS leases to a fenced backend with lease.correctness-backend: zookeeper (or jdbc), "
                            + "or declare the work kind = EFFICIENCY if a rare duplicate is harmless.");
        }
    }

    private static LeaseBackend<?> pick(List<LeaseBackend<?>> available, String property, String id) {
        String wanted = id.trim().toLowerCase();
        for (LeaseBackend<?> backend : available) {
            if (backend.id().equals(wanted)) {
                return backend;
            }
        }
        if (!KnownBackends.IDS.contains(wanted)) {
            throw new LeaseConfigurationException(
                    property + "=" + id + " names no lease backend.",
                    "use one of " + KnownBackends.IDS + ".");
        }
        throw new LeaseConfigurationException(
                property + "=" + id + " names a backend that is not available" + availableSuffix(available) + ".",
                KnownBackends.howToEnable(wanted));
    }

    private static LeaseBackend<?> onlyOne(List<LeaseBackend<?>> available) {
        if (available.size() == 1) {
            return available.get(0);
        }
        if (available.isEmpty()) {
            throw new LeaseConfigurationException("No lease backend is available.",
                    "add a backend client and configure it: " + KnownBackends.howToEnable("zookeeper") + " Or "
                            + KnownBackends.howToEnable("redis") + " Or " + KnownBackends.howToEnable("jdbc")
                            + " For tests and single-instance applications: lease.backend: in-memory.");
        }
        throw new LeaseConfigurationException(
                "Several lease backends are available" + availableSuffix(available) + " and none is chosen.",
                "set lease.backend (or both lease.correctness-backend and lease.efficiency-backend).");
    }

    private static String availableSuffix(List<LeaseBackend<?>> available) {
        return available.isEmpty() ? " (none are)"
                : " (available: " + available.stream().map(LeaseBackend::id).collect(Collectors.joining(", ")) + ")";
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }

    /** The backends this project ships and how each becomes available. */
    static final class KnownBackends {

        static final List<String> IDS = List.of("zookeeper", "redis", "jdbc", "in-memory");

        private KnownBackends() {
        }

        static String howToEnable(String id) {
            return switch (id) {
                case "zookeeper" -> "add org.apache.curator:curator-framework and set lease.zookeeper.connect-string "
                        + "(or define a CuratorFramework bean).";
                case "redis" -> "add spring-boot-starter-data-redis and configure spring.data.redis.*.";
                case "jdbc" -> "add spring-boot-starter-jdbc and configure a DataSource (spring.datasource.*).";
                case "in-memory" -> "set lease.backend: in-memory (or name it in lease.correctness-backend / "
                        + "lease.efficiency-backend).";
                default -> "use one of " + IDS + ".";
            };
        }
    }
}
