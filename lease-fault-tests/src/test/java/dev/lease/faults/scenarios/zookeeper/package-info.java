/**
 * Fault scenarios on ZooKeeper leases: faults on the holder, on the store and the network, the JPA and HTTP
 * workloads, and the nemesis.
 */
package dev.lease.faults.scenarios.zookeeper;
