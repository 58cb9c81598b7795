/**
 * Fault scenarios on Kubernetes leases, over fabric8's mock API server (the one lease store the suite does not run
 * for real): the nemesis.
 */
package dev.lease.faults.scenarios.kubernetes;
