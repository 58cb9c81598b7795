/**
 * Spring Boot auto-configuration of the lease starter: the configuration properties under {@code lease.*}
 * ({@link dev.lease.autoconfigure.LeaseProperties}, and one properties class beside each backend's configuration),
 * and the auto-configuration that routes each lease kind to a backend, creates the {@code LeaseTemplate} bean and
 * advises {@code @Leased} methods ({@link dev.lease.autoconfigure.LeaseAutoConfiguration}). It imports one
 * package-private configuration per backend, as Spring Boot's cache auto-configuration does;
 * {@code JdbcFenceAutoConfiguration} stands apart, as fencing a table does not depend on where leases are kept.
 * Applications configure these through properties and their own beans; they do not use the classes directly.
 *
 * <p>Types are non-null unless annotated {@code @Nullable}, as in Spring Framework 7 and Spring Boot 4.
 */
@NullMarked
package dev.lease.autoconfigure;

import org.jspecify.annotations.NullMarked;
