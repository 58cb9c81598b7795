/**
 * That the checks can fail: deliberately broken pieces of the system ({@link dev.lease.faults.mutants.Mutant}), the
 * scenario classes' runs against them ({@link dev.lease.faults.mutants.FaultScenarios}, {@link
 * dev.lease.faults.mutants.MutantRuns}) and the detection table ({@code target/fault-detection.md}).
 */
package dev.lease.faults.mutants;
