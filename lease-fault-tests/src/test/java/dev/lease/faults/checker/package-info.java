/**
 * What every fault run must prove, checked from its record: the {@link dev.lease.faults.checker.History} of
 * operations the holders reported, {@link dev.lease.faults.checker.HistoryChecker} against the fenced table, and the
 * results table ({@code target/fault-results.md}) that every run adds its row to.
 */
package dev.lease.faults.checker;
