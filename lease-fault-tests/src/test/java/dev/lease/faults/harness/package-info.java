/**
 * What runs a scenario and strikes it: {@link dev.lease.faults.harness.FaultRun} (workers, faults, the final
 * check), the {@link dev.lease.faults.harness.Nemesis} and its scenarios, the forced stale writes, child JVMs, servers
 * that crash, signals, wall clocks, seeds and the soak switch.
 */
package dev.lease.faults.harness;
