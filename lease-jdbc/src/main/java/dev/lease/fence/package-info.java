/**
 * Resource-side fencing: the checks that make a {@link dev.lease.LeaseKind#CORRECTNESS} lease a guarantee. A write
 * carries the lease's {@link dev.lease.FencingToken}, and the resource refuses any token lower than the highest it
 * has accepted ({@link dev.lease.fence.StaleTokenException}).
 */
package dev.lease.fence;
