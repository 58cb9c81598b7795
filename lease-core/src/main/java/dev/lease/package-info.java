/**
 * Distributed leases for Spring Boot that are honest about what a lock can and cannot promise.
 *
 * <p>A lease is exclusive rights on a name for a bounded time, kept alive by renewing it before it runs out.
 * Annotate a method with {@link dev.lease.Leased}, or call {@link dev.lease.LeaseTemplate}: the lease is acquired
 * before the work runs, bound to the thread ({@link dev.lease.LeaseContext}), renewed in the background and released
 * with the grant this process holds, so an expired holder never releases its successor's lease.
 *
 * <h2>Two kinds, chosen per lease</h2>
 *
 * <p>A holder can pause at any moment (GC, page faults, CPU starvation, a slow network) for longer than its lease;
 * the lease expires, someone else takes it, and the first holder wakes up and writes as if it still held it. No lock
 * service can prevent that on its own. So every lease says which guarantee it needs ({@link dev.lease.LeaseKind},
 * no default on purpose):
 * <ul>
 *   <li>{@link dev.lease.LeaseKind#EFFICIENCY}: a duplicate run only wastes work. Any backend will do. A duplicate
 *       stays possible, so the work should be idempotent.</li>
 *   <li>{@link dev.lease.LeaseKind#CORRECTNESS}: a duplicate would corrupt data or bill twice. Every grant carries a
 *       {@link dev.lease.FencingToken} that strictly increases per name, and the resource must refuse a token lower
 *       than the highest it has accepted ({@code dev.lease.fence.JdbcFence}). Only backends that issue tokens
 *       (ZooKeeper, JDBC, in-memory) serve this kind; routing it to one that does not (Redis) fails the startup.</li>
 * </ul>
 *
 * <h2>What the library promises</h2>
 * <ul>
 *   <li>Local validity is measured on the monotonic clock from before the acquire request was sent, and is extended
 *       only by a successful renewal; expiry at the store follows the store's clock, never this JVM's.</li>
 *   <li>When the lease is lost (a failed renewal, a loss the backend reports such as a suspended ZooKeeper session,
 *       or the local deadline passing), {@link dev.lease.Lease#isValid()} turns false for good and the thread running
 *       the leased work is interrupted at once; when the work returns or throws, the caller gets
 *       {@link dev.lease.LeaseLostException}. There is no "finish the current item first".</li>
 *   <li>Configuration mistakes that can be found before the first call (durations, kind routing, return types, name
 *       templates, unknown {@code lease.*} keys, an unreachable backend) fail the application at startup with a
 *       message naming the method, the lease and the fix.</li>
 * </ul>
 *
 * <h2>What it does not promise</h2>
 * <ul>
 *   <li>Mutual exclusion in time: while {@code isValid()} is true, the name has not been granted to anyone else as
 *       far as this process can tell, but the process can pause right after checking. Without a token check at the
 *       resource, a lease is a hint, not a guarantee.</li>
 *   <li>That work stops: code that swallows {@link java.lang.InterruptedException} or blocks in uninterruptible I/O
 *       keeps running without the lease. The fence at the resource is what stops its writes.</li>
 *   <li>Exactly-once: even a singleton {@code EFFICIENCY} job can run twice. Make jobs idempotent.</li>
 *   <li>Anything outside the fenced resource: an email sent or an HTTP call made is not undone by
 *       {@link dev.lease.LeaseLostException}.</li>
 * </ul>
 */
package dev.lease;
