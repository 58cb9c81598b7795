package dev.lease.fence.http;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a Spring MVC handler method: the request must carry a {@code Fencing-Token} header, and the application's
 * {@link dev.lease.fence.Fence} bean is advanced for {@link #resource()} with that token, in the handler's
 * transaction, before the handler body runs.
 *
 * <pre>{@code
 * @PostMapping("/payments/{invoice}")
 * @Transactional
 * @FencedRequest(resource = "payment-#{#invoice}", lease = "invoice-#{#invoice}")
 * public Payment pay(@PathVariable long invoice, @RequestBody PaymentRequest request) { ... }
 * }</pre>
 *
 * <ul>
 * <li>No header, or a malformed one: {@code 428 Precondition Required}, an {@code application/problem+json} body of
 * type {@code urn:lease:problem:fencing-token-required} naming the header and what was wrong.</li>
 * <li>A token lower than one the resource already accepted: {@code 409 Conflict}, type
 * {@code urn:lease:problem:stale-token} with {@code resource}, {@code lease}, {@code presented} and
 * {@code current}. The transaction rolls back and the handler never runs.</li>
 * <li>An equal or higher token: the fence moves up to it and the handler runs; its row lock (with
 * {@link dev.lease.fence.JdbcFence}) holds later holders off until the handler's transaction ends.</li>
 * </ul>
 *
 * <p>The fence keeps one highest token per resource, whatever lease it came from: <b>a resource must always be
 * written under one lease name</b>, or a token of one lease would lock out (or let in) the holders of another. Name
 * that lease in {@link #lease()} and the server refuses (428) a token of any other lease, instead of comparing
 * tokens that say nothing about each other.
 *
 * <p>With {@link dev.lease.fence.JdbcFence} (the default {@code Fence}) the handler must be {@code @Transactional}:
 * the fence joins that transaction, so the check and the handler's writes commit or roll back together. A handler
 * without a transaction fails the startup.
 *
 * <p>The handler must be synchronous: one returning work that Spring MVC runs after it returned ({@code Callable},
 * {@code WebAsyncTask}, {@code DeferredResult}, {@code CompletionStage}, a {@code Publisher},
 * {@code ResponseBodyEmitter}, {@code StreamingResponseBody}, any of those in a {@code ResponseEntity}) fails the
 * startup, because that work would run after the fence's transaction committed. In a WebFlux application
 * {@code @FencedRequest} is not enforced, so it fails the startup there too, naming the methods.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencedRequest {

    /**
     * The fenced resource: a literal, or a template with {@code #{...}} SpEL parts over the handler's arguments, such
     * as {@code "payment-#{#invoice}"}, checked at startup like {@code @Leased} names.
     *
     * @return the resource the request writes
     */
    String resource();

    /**
     * The lease the resource is written under (literal or template over the arguments); a token of another lease is
     * refused with 428. Empty: any lease is accepted, and the application keeps each resource under one lease name.
     *
     * @return the expected lease name, or empty
     */
    String lease() default "";
}
