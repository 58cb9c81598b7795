package dev.lease.autoconfigure;

import java.util.Optional;
import java.util.stream.Stream;

import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;

/**
 * A startup check of the backends leases are routed to, run as soon as the routes are chosen. Checking at routing
 * rather than when a backend is created leaves alone a client the application only has for something else, such as
 * a Redis used as a cache while leases go to ZooKeeper.
 */
@FunctionalInterface
interface RoutedBackendCheck {

    /**
     * @throws dev.lease.LeaseConfigurationException when a backend {@code router} routes to cannot serve
     */
    void check(BackendRouter router);

    /** The backends of {@code type} that {@code router} routes some lease kind to, each once. */
    static <B> Stream<B> routedTo(BackendRouter router, Class<B> type) {
        return Stream.of(LeaseKind.values()).map(router::routeOf).flatMap(Optional::stream).filter(type::isInstance)
                .map(type::cast).distinct();
    }
}
