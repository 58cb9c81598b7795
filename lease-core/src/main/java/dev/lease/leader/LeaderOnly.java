package dev.lease.leader;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.lease.LeaseKind;

/**
 * Runs the annotated method only while this instance leads {@link #election()}, typically on a
 * {@code @Scheduled} method that every instance triggers:
 *
 * <pre>{@code
 * @Scheduled(fixedDelay = 60_000)
 * @LeaderOnly(election = "invoice-reminders", kind = LeaseKind.CORRECTNESS)
 * public void sendReminders() {
 *     FencingToken term = LeaseContext.token();   // the current term's token
 *     ...
 * }
 * }</pre>
 *
 * <p>On the leader the method runs with the term's lease bound to the thread, so {@code LeaseContext} reads it,
 * and the thread is interrupted at once if leadership is lost while it runs; the caller then gets
 * {@link dev.lease.LeaseLostException}, as with {@code @Leased}. Elsewhere it returns at once as
 * {@code whenBusy = SKIP} would: {@code null}, {@code Optional.empty()}, or nothing. The election campaigns from
 * application start, whether the method is called or not. The election name, the routing of its kind and the return
 * type are checked at startup, and two declarations of one election with different kinds fail the startup.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /**
     * The election: a literal name, valid as a lease name (see {@code Leased#name()}); instances that declare the
     * same name compete for it.
     *
     * @return the election name
     */
    String election();

    /**
     * Which backend may hold the election, as for {@code @Leased}: {@code CORRECTNESS} needs a fenced backend.
     *
     * @return the lease kind of the election's terms
     */
    LeaseKind kind();
}
