package dev.lease.autoconfigure;

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
}
