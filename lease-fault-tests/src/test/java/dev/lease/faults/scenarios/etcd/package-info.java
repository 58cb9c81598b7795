/**
 * Fault scenarios on etcd leases: the nemesis on a three-member cluster.
 */
package dev.lease.faults.scenarios.etcd;
