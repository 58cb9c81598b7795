package dev.lease;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes the annotated method's effects in the application's database take effect once per key, whatever the leases
 * around it do: a holder paused past its lease and its successor, two instances whose clocks differ, a retry after a
 * crash.
 *
 * <p>Before the body runs, in the method's transaction on the application's {@code DataSource} (the active one,
 * else one opened with the application's transaction manager, so that JDBC and JPA writes commit with it), the key
 * is inserted into the table {@code lease_once(once_key, done_at, token)}, with the token of the innermost lease of
 * the thread when there is one:
 * <ul>
 *   <li>a key already committed: the body does not run, and the call returns as {@link WhenBusy#SKIP} does
 *       ({@code null}, {@code Optional.empty()}, nothing);</li>
 *   <li>a key another open transaction is inserting: the call waits for that transaction (at most the remaining
 *       validity of the thread's lease, else {@code lease.once.wait}, then {@link LeaseUnavailableException} naming
 *       the key) and runs only if that transaction rolled back;</li>
 *   <li>a body that throws rolls the transaction back and leaves no record: the next call with that key runs.</li>
 * </ul>
 *
 * <p>With {@link Leased} on the same method the lease is taken first: the lease makes duplicates rare and cheap,
 * {@code @Once} makes them harmless. Effects outside the database (a mail, a call to another service) still happen
 * at least once: pass the key downstream (an {@code Idempotency-Key} header) so that the other side can drop
 * duplicates. Keys are kept for {@code lease.once.retention} (30 days by default); a call with an older key runs
 * again.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @Leased(name = "nightly-report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
 * @Once(key = "nightly-report-#{period}")
 * public void nightlyReport() { ... }
 * }</pre>
 *
 * <p>Checked at startup: the key template, the {@code lease_once} table, a transaction manager of the DataSource,
 * and a return type that can say "skipped"; {@code Mono}/{@code Flux} methods are refused.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Once {

    /**
     * The key: a literal such as {@code "migrate-2026-12"}, or a template whose {@code #{...}} parts are SpEL over
     * the method arguments ({@code "invoice-#{#id}"}) and {@code #{period}}: on a method that also has
     * {@code @Scheduled}, the nominal time of the current tick as an ISO-8601 local date-time without fraction (for
     * a cron, its latest fire time at or before now in the cron's zone; for a fixed rate or delay, the start of the
     * current window of that length since the epoch, in UTC), so that instances whose clocks differ by less than the
     * period agree on it. At most 255 characters once evaluated.
     *
     * @return the key
     */
    String key();
}
