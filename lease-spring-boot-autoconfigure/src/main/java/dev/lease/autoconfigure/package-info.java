/**
 * Spring Boot auto-configuration of the lease starter: the configuration properties under {@code lease.*}
 * ({@link dev.lease.autoconfigure.LeaseProperties}), one auto-configuration per backend, and the one that routes
 * each lease kind to a backend, creates the {@code LeaseTemplate} bean and advises {@code @Leased} methods
 * ({@link dev.lease.autoconfigure.LeaseAutoConfiguration}). Applications configure these through properties and
 * their own beans; they do not use the classes directly.
 */
package dev.lease.autoconfigure;
