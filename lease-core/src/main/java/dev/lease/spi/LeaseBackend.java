package dev.lease.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A store that grants leases. Implementations must be thread-safe; every method may block on I/O and may be
 * interrupted, in which case it should let {@link InterruptedException} (or the store client's equivalent)
 * propagate.
 *
 * <p>The rules a backend must keep, checked by the contract test suite every backend extends:
 * <ul>
 *   <li>at most one unexpired grant per name at any time, judged by the store's clock, never the JVM's;</li>
 *   <li>if its {@link #traits()} say it issues fencing tokens, every grant of a name carries a token strictly
 *       greater than all earlier grants of that name, even across restarts of the store;</li>
 *   <li>{@link #renew} and {@link #release} act only if the grant is still the current one: an expired holder
 *       never renews or releases its successor's grant.</li>
 * </ul>
 *
 * @param <G> the backend's own grant type (usually a record carrying the owner id or version it renews and releases
 *        with): the engine hands back exactly what {@link #tryAcquire} returned, so no backend needs a downcast
 */
public interface LeaseBackend<G extends Grant> {

    /**
     * Short identifier used in configuration ({@code lease.backend}) and logs.
     *
     * @return the identifier, such as {@code zookeeper}
     */
    String id();

    /**
     * What this backend can do: whether it issues fencing tokens (and if not, why), whether it renews many grants in
     * one call, whether its calls return by their deadline, its longest ttl and its validity margin. Start from
     * {@link BackendTraits#fenced()} or {@link BackendTraits#unfenced(String)}; a wrapper extends
     * {@link ForwardingLeaseBackend}, which answers what its delegate answers.
     *
     * <p>The engine asks often (at startup for the fencing, then on every grant request and wait, when a lease's
     * timing is resolved, and once after the backend's first grant for the renewals), so the answer must be cheap and
     * must not block on I/O. It may change over time when what it describes does (a connection that opened, a
     * session timeout the server negotiated), but whether the backend issues fencing tokens must not.
     *
     * @return the backend's traits
     */
    BackendTraits traits();

    /**
     * Tries once to grant the lease, without waiting.
     *
     * @param request the name, ttl, loss listener and attempt id
     * @return the grant, or empty when someone else holds an unexpired grant
     * @throws IllegalArgumentException when the store cannot hold the name; not retried
     * @throws Exception when the store could not be asked or did not answer; the engine retries while the caller
     *         may still wait, and calls {@link #abandon} for this request
     */
    Optional<G> tryAcquire(GrantRequest request) throws Exception;

    /**
     * Extends the grant by its ttl, counted on the store's clock from now, if it is still the current grant.
     *
     * @param grant a grant this backend returned from {@link #tryAcquire}
     * @return false when the grant is no longer ours (expired, taken over, deleted)
     * @throws Exception when the store could not be asked or did not answer; like false, the lease is then lost
     */
    boolean renew(G grant) throws Exception;

    /**
     * Renews many grants at once and says which of them are no longer held, for a backend that can confirm them in
     * one round trip (one statement, one script call, one session heartbeat). The default renews them one by one, a
     * grant whose renewal throws counting as lost.
     *
     * <p>The engine groups the renewals that are due on a backend whose {@link BackendTraits#renewsInOneCall()} is
     * true into one call: the renewals due when the first of them falls due, plus those due within a quarter of their renewal interval
     * after it, which are renewed early (so leases with the same timing come to share one call per interval), at most
     * a few hundred grants a call. While one call is in flight the next batch collects, and goes when the answer
     * comes, or when its first renewal is due, whichever is first. Each lease's validity is extended from the
     * engine's monotonic time read before the call started, and only if it has not run out meanwhile; a grant in the
     * returned set is lost as if {@link #renew} had answered false; an exception fails every grant of the call. The
     * call runs on the backend's own I/O pool, may be abandoned (its answer ignored for grants released or lost
     * meanwhile) but is never interrupted by the engine. Any other backend is renewed with {@link #renew}, one call
     * per grant when it is due, in parallel, as the default would put them in series.
     *
     * @param grants grants this backend returned from {@link #tryAcquire}
     * @return those of {@code grants} that are no longer ours (the very objects passed in, or equal ones); empty when
     *         all were renewed. An element that is none of {@code grants} fails the whole call, as an exception does.
     * @throws InterruptedException when the renewing thread is interrupted
     * @throws Exception when the store could not be asked at all: every grant of the batch is then lost
     */
    default Set<G> renewAll(Collection<G> grants) throws Exception {
        Set<G> lost = new HashSet<>();
        for (G grant : grants) {
            try {
                if (!renew(grant)) {
                    lost.add(grant);
                }
            }
            catch (InterruptedException ex) {
                throw ex;
            }
            catch (Exception ex) {
                lost.add(grant);
            }
        }
        return lost;
    }

    /**
     * Ends the grant if it is still the current one; does nothing otherwise.
     *
     * @param grant a grant this backend returned from {@link #tryAcquire}
     * @throws Exception when the store could not be asked; the grant then expires on its own
     */
    void release(G grant) throws Exception;

    /**
     * Removes the grant that {@code request} may have created, after {@link #tryAcquire} threw (an error, a timeout,
     * an interrupt) once the request may already have reached the store: a grant nobody holds would block the name
     * for every instance until it expires. The engine calls it in the background, never on the caller's thread.
     * It must only remove a grant made by this very request (its {@link GrantRequest#attempt()} id, or for
     * ZooKeeper a holder of this backend that no live grant claims), never a successor's. The default does nothing,
     * which is right only for a backend whose {@code tryAcquire} cannot leave a grant behind when it throws.
     *
     * @param request the request whose {@link #tryAcquire} threw
     * @throws Exception when the store could not be asked; the grant, if any, then expires on its own
     */
    default void abandon(GrantRequest request) throws Exception {
    }

    /**
     * Blocks until the named lease may have been released, or {@code maxWait} passed, whichever comes first.
     * Spurious returns are fine: the engine tries again and backs off. Backends that can be notified of a release
     * (watches, pub/sub) should return early on it; the default just sleeps.
     *
     * @param name the busy lease name
     * @param maxWait the longest to block
     * @throws InterruptedException when the waiting thread is interrupted
     */
    default void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        Thread.sleep(Math.max(1, maxWait.toMillis()));
    }

    /**
     * Checks, within about {@code timeout} and without taking a lease, that this backend can serve leases now: the
     * operator's question behind a health check. Cheap and side-effect free: a connection state the client already
     * tracks, a {@code PING}, a read of the lease table. Callers (the Actuator health contributor) stop waiting at the
     * timeout whatever the backend does, so a backend that cannot bound its own call is still safe to ask, but one
     * that can (a JDBC query timeout) should, so that no thread stays stuck on a dead connection.
     *
     * <p>The default reports a backend with nothing to check, such as the in-memory one, as healthy.
     *
     * @param timeout about how long the check may take
     * @return details to show next to the healthy status, such as the connection state; empty when there are none
     * @throws InterruptedException when the checking thread is interrupted
     * @throws Exception when the backend cannot serve leases now, with a message saying why (the operator reads it)
     */
    default Map<String, Object> checkHealth(Duration timeout) throws Exception {
        return Map.of();
    }

    /**
     * Refuses names the store cannot hold, with an {@link IllegalArgumentException} that says why. Names reaching
     * this method already passed the engine's own rules (not blank, no {@code /}, {@code \}, control characters,
     * not {@code .} or {@code ..}, at most 200 characters).
     *
     * @param name the lease name
     */
    default void validateName(String name) {
    }
}
