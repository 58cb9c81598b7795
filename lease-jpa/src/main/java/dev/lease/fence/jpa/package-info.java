/**
 * Fenced JPA entities: a {@link dev.lease.fence.jpa.FenceColumn} field makes every write of the entity through
 * Hibernate check and carry the fencing token of the lease the writing thread holds, and
 * {@link dev.lease.fence.jpa.UnfencedWrites} is the explicit opt-out for writes that need no lease.
 */
package dev.lease.fence.jpa;
