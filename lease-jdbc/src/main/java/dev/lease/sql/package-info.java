/**
 * The SQL lease-jdbc speaks to the databases it supports, shared by its two sides: the lease backend
 * ({@code dev.lease.jdbc}) and the resource-side fences ({@code dev.lease.fence}). Neither owns it, so it is a package
 * of its own that both depend on, as Spring's {@code org.springframework.jdbc.support} serves its sibling packages;
 * its types are public because Java shares them across packages no other way. Applications have no use for it and
 * it is no contract: it changes with the SQL of either side.
 */
package dev.lease.sql;
