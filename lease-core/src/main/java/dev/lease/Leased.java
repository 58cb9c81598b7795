package dev.lease;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lease.
 *
 * <p>Before the method runs, the lease is acquired from the backend that serves {@link #kind()}, bound to the
 * thread (read it with {@link LeaseContext}) and renewed in the background. If it is lost while the method runs,
 * the thread is interrupted at once, and when the method returns or throws, the caller gets
 * {@link LeaseLostException}: the result may have been produced without the lease. The lease is released when
 * the method exits. Around {@code @Transactional} the lease is the outer layer, so the commit happens while the
 * lease is still held. With {@code @Async} the lease is the inner layer: it is taken on the executor thread that
 * runs the body and held for the whole body, so such a method may return a {@code CompletableFuture}, and a
 * {@code LeaseUnavailableException} or {@code LeaseLostException} reaches the caller through that future.
 *
 * <pre>{@code
 * @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS)
 * public void bill(long invoiceId) {
 *     fence.advance("invoice-" + invoiceId, LeaseContext.token());
 *     ...
 * }
 * }</pre>
 *
 * <p>Everything that can be checked before the first call (durations, kind routing, return types) is checked at
 * startup, and a mistake fails the application with a message naming the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Leased {

    /**
     * The lease name: a literal such as {@code "nightly-report"}, or a template whose {@code #{...}} parts are SpEL
     * over the method arguments: {@code "invoice-#{#invoiceId}"}, {@code "#{#p0}"}, {@code "#{#root.args[0]}"}.
     * Names may not be blank, start or end with white space, contain {@code /}, {@code \} or control characters, be
     * {@code .} or {@code ..}, or exceed 200 characters.
     *
     * @return the lease name or name template
     */
    String name();

    /**
     * Whether the lease protects data ({@code CORRECTNESS}) or only saves work ({@code EFFICIENCY}); no default on
     * purpose.
     *
     * @return the lease kind
     */
    LeaseKind kind();

    /**
     * Time to live: {@code "30s"}, {@code "PT30S"} or a {@code "${...}"} placeholder.
     *
     * @return the ttl; empty means {@code lease.default-ttl}
     */
    String ttl() default "";

    /**
     * How often to renew; must be less than half the ttl. Same formats as {@link #ttl()}.
     *
     * @return the renewal interval; empty means {@code lease.renew-every} if set, else ttl/3
     */
    String renewEvery() default "";

    /**
     * How long to wait for a busy lease before giving up. Same formats as {@link #ttl()}. Threads of one application
     * waiting for the same name queue behind one that asks the store; see {@link LeaseSpec#withWaitFor} for the order
     * they get the lease in, and what is promised between applications.
     *
     * @return the wait; empty means do not wait
     */
    String waitFor() default "";

    /**
     * What to do when the lease is still busy after {@link #waitFor()}.
     *
     * @return {@link WhenBusy#THROW} (the default) or {@link WhenBusy#SKIP}
     */
    WhenBusy whenBusy() default WhenBusy.THROW;

    /**
     * Fence at grant: a resource (literal or {@code #{...}} template, like {@link #name()}) whose
     * {@code JdbcFence} is advanced to the new token right after the grant, in a short transaction of its own that
     * commits before the method runs. From then on every write with an older token through {@code JdbcFence} is
     * refused, even before this method writes anything, which closes the window in which a holder that paused past
     * its lease could still write. If the fence already accepted a newer token, the lease was superseded before the
     * method started: the method does not run and the caller gets {@link LeaseLostException} caused by the fence's
     * {@code StaleTokenException}. Costs one more transaction per grant. {@code CORRECTNESS} only, and it needs a
     * {@code JdbcFence} bean; both are checked at startup.
     *
     * @return the fenced resource or resource template; empty means no fence at grant
     */
    String fence() default "";

    /**
     * Keep the lease at least this long after its grant, even when the method returns sooner (ShedLock's
     * {@code lockAtLeastFor}). Same formats as {@link #ttl()}. Until then the lease stays held, renewed as usual, and
     * every call for the name, on this instance or another, finds it busy; then it is released. This is what makes a
     * short {@code @Scheduled} job with {@code whenBusy = SKIP} run once per period on several instances whose ticks
     * are not aligned: hold it for most of the period. It may exceed the ttl, and costs no request beyond the
     * renewals it keeps. Closing the application releases a lease so held at once; an instance that crashes leaves
     * it to its ttl; a lease lost meanwhile is not held any more (there is no work left to interrupt). A nested
     * section that re-enters a lease the enclosing section holds does not change when it is released.
     *
     * @return the hold; empty (or zero) means release the lease as the method returns
     */
    String holdAtLeast() default "";
}
