/**
 * Fault scenarios on EFFICIENCY leases on Redis and Redlock: no token, so overlaps are counted, not refused.
 */
package dev.lease.faults.scenarios.redis;
