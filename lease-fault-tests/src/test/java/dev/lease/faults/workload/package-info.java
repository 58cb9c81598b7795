/**
 * What the holders do: lease and leadership workers looping acquire, write with the token, release, in this JVM
 * or in a child JVM ({@link dev.lease.faults.workload.HolderMain}), against the fenced
 * {@link dev.lease.faults.workload.Ledger} (JdbcFence, JPA, HTTP or R2DBC writes).
 */
package dev.lease.faults.workload;
