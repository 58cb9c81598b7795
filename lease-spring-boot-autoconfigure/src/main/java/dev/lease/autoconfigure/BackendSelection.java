package dev.lease.autoconfigure;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.spi.LeaseBackend;

/** Picks the route of each lease kind from the {@code lease.*backend} properties and the backends available. */
final class BackendSelection {

    private BackendSelection() {
    }

    /**
     * @param available every backend whose client is present and configured
     * @param backend {@code lease.backend}, may be null
     * @param correctness {@code lease.correctness-backend}, may be null
     * @param efficiency {@code lease.efficiency-backend}, may be null
     * @throws LeaseConfigurationException for an unknown or unavailable id, an ambiguous choice, no backend at
     *         all, or CORRECTNESS routed explicitly to a backend without fencing tokens
     */
    static BackendRouter select(List<LeaseBackend<?>> available, @Nullable String backend,
            @Nullable String correctness, @Nullable String efficiency) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        LeaseBackend<?> common = isSet(backend) ? pick(available, "lease.backend", backend) : null;
        if (common == null && !(isSet(correctness) && isSet(efficiency))) {
            common = onlyOne(available);
        }
        routes.put(LeaseKind.CORRECTNESS,
                isSet(correctness) ? pick(available, "lease.correctness-backend", correctness) : common);
        routes.put(LeaseKind.EFFICIENCY,
                isSet(efficiency) ? pick(available, "lease.efficiency-backend", efficiency) : common);
        BackendRouter router = BackendRouter.of(routes);
        if (isSet(correctness)) {
            try {
                router.backendFor(LeaseKind.CORRECTNESS);
            }
            catch (LeaseConfigurationException ex) {
                throw new LeaseConfigurationException("lease.correctness-backend=" + correctness + ": "
                        + ex.description(), ex.action());
            }
        }
        return router;
    }

    private static LeaseBackend<?> pick(List<LeaseBackend<?>> available, String property, String id) {
        String wanted = id.trim().toLowerCase();
        for (LeaseBackend<?> backend : available) {
            if (backend.id().equals(wanted)) {
                return backend;
            }
        }
        BackendType type = BackendType.of(wanted).orElseThrow(() -> new LeaseConfigurationException(
                property + "=" + id + " names no lease backend.", "use one of " + BackendType.ids() + "."));
        throw new LeaseConfigurationException(
                property + "=" + id + " names a backend that is not available" + availableSuffix(available) + ".",
                type.howToEnable);
    }

    private static LeaseBackend<?> onlyOne(List<LeaseBackend<?>> available) {
        if (available.size() == 1) {
            return available.get(0);
        }
        if (available.isEmpty()) {
            throw new LeaseConfigurationException("No lease backend is available.",
                    "add a backend client and configure it: " + BackendType.howToEnableAny()
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

    private static boolean isSet(@Nullable String value) {
        return value != null && !value.isBlank();
    }
}
