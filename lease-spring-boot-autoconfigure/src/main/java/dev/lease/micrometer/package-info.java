/**
 * Micrometer metrics and observations of leases, for applications that have Micrometer: the names, tags and the
 * observation convention here are a contract (dashboards and alerts depend on them). With Spring Boot the
 * auto-configuration binds them to the application's {@code MeterRegistry} and {@code ObservationRegistry}; a plain
 * Spring application passes a {@link dev.lease.micrometer.LeaseMetrics} to its {@code LeaseEngine} and a
 * {@link dev.lease.micrometer.FenceMetrics} to its {@code JdbcFence}.
 */
package dev.lease.micrometer;
