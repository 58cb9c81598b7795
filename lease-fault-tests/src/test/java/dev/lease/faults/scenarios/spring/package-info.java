/**
 * Fault scenarios of Spring applications on ZooKeeper through the real {@code @Leased} proxy and auto-configuration,
 * and their application ({@code WorkloadApp}) beside them.
 */
package dev.lease.faults.scenarios.spring;
