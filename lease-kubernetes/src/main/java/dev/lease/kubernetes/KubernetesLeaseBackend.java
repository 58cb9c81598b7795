package dev.lease.kubernetes;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Leases as Kubernetes {@code coordination.k8s.io/v1} Lease objects, one per lease name in one namespace, named
 * {@code namePrefix + name}; fenced by {@code resourceVersion} on Kubernetes 1.35 and later.
 *
 * <p>Every write (acquire, renew, release) is an update conditional on the {@code resourceVersion} last read or
 * written here, so a 409 means someone else wrote first. The fencing token is the {@code resourceVersion} the
 * acquiring write returned: from 1.35 (KEP-5504) it is an integer greater than that of every earlier write in the
 * cluster, so it rises across grants, holders and even deletion and re-creation of the object. It is compared as a
 * number and never assumed to be the previous one plus one. On older servers {@code resourceVersion} is opaque and the
 * backend issues no tokens, so it serves {@code EFFICIENCY} leases only: the server version is read from
 * {@code /version} when the backend is created.
 *
 * <p>Expiry is judged as client-go judges it: a competitor takes over a held Lease only after it has itself observed
 * the object unchanged (same {@code resourceVersion}) for the lease duration written in it, measured on its own
 * monotonic clock from the moment its read returned, plus a margin ({@link Observations#takeoverMarginNanos}). Wall clocks of different nodes are never compared;
 * {@code renewTime} and {@code acquireTime} are written for people and other tools only. The holder writes a duration
 * of its ttl rounded up to whole seconds and counts its own validity from before its request, so its validity ends
 * before any competitor can take over (as long as the two clocks' rates differ by less than the margin). Every renewal writes a
 * new {@code renewTime}, so that it always changes the object and its {@code resourceVersion}.
 *
 * <p>The backend uses, and never closes, the {@link KubernetesClient} it is given. It needs {@code get},
 * {@code create}, {@code update} and {@code watch} on {@code leases} in its namespace.
 */
public final class KubernetesLeaseBackend implements LeaseBackend<KubernetesGrant> {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "kubernetes";

    /** How many observations of held Lease objects are kept at most; see {@link Observations}. */
    static final int OBSERVATION_LIMIT = 10_000;

    private static final Log log = LogFactory.getLog(KubernetesLeaseBackend.class);

    private final KubernetesClient client;
    private final String namespace;
    private final LeaseObjectNames names;
    private final String holderIdentity;
    private final ServerVersion serverVersion;
    /** Fenced or not by the server version read at startup. */
    private final BackendTraits traits;
    private final LeaseObjects objects;
    private final Observations observed;
    private final ResourceVersionTokens tokens;
    private final ObjectWatches watches;
    private final boolean useWatches;

    /**
     * Creates the backend and reads the server version from {@code /version}.
     *
     * @param client the client to use; left open
     * @param namespace the namespace holding the Lease objects
     * @param namePrefix prepended to lease names to form Lease object names, such as {@code lease-}
     * @param holderIdentity written as {@code holderIdentity} of the Leases held here; unique per application instance
     * @throws IllegalArgumentException when the namespace, prefix or identity is unusable
     * @throws KubernetesClientException when {@code /version} cannot be read
     */
    public KubernetesLeaseBackend(KubernetesClient client, String namespace, String namePrefix, String holderIdentity) {
        this(client, namespace, namePrefix, holderIdentity, true);
    }

    /**
     * @param watch false to wait by polling alone: fabric8's mock API server stalls its event loop for seconds
     *        whenever a watch closes, so tests that wait a lot on it poll instead (a real server does not)
     */
    KubernetesLeaseBackend(KubernetesClient client, String namespace, String namePrefix, String holderIdentity,
            boolean watch) {
        this(client, namespace, namePrefix, holderIdentity, watch, OBSERVATION_LIMIT);
    }

    KubernetesLeaseBackend(KubernetesClient client, String namespace, String namePrefix, String holderIdentity,
            boolean watch, int observationLimit) {
        this.observed = new Observations(observationLimit);
        this.useWatches = watch;
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        if (!namespace.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
            throw new IllegalArgumentException("Invalid namespace '" + namespace + "' for the kubernetes lease backend: "
                    + "a namespace name has lower-case letters, digits and '-' (at most 63), such as 'default'.");
        }
        this.names = new LeaseObjectNames(namePrefix);
        if (holderIdentity == null || holderIdentity.isBlank()) {
            throw new IllegalArgumentException("The holder identity of the kubernetes lease backend is blank: set it to "
                    + "a name unique to this application instance, such as the pod name.");
        }
        this.holderIdentity = holderIdentity;
        this.objects = new LeaseObjects(client, namespace, holderIdentity);
        this.watches = new ObjectWatches(client, namespace);
        this.serverVersion = ServerVersion.of(client.getKubernetesVersion());
        this.traits = serverVersion.comparesResourceVersions() ? BackendTraits.fenced()
                : BackendTraits.unfenced("the kubernetes backend issues fencing tokens only on Kubernetes "
                        + ServerVersion.COMPARABLE_RESOURCE_VERSIONS.text() + " or later, where resourceVersion is a "
                        + "comparable integer (KEP-5504), and the API server at " + client.getMasterUrl()
                        + " reports " + serverVersion.text());
        this.tokens = new ResourceVersionTokens(
                () -> "the API server at " + client.getMasterUrl() + " reports " + serverVersion.text());
        if (!serverVersion.comparesResourceVersions()) {
            log.info("Kubernetes API server " + client.getMasterUrl() + " is " + serverVersion.text()
                    + ": its resourceVersions are opaque, so Kubernetes leases are EFFICIENCY-only (no fencing tokens)");
        }
    }

    @Override
    public String id() {
        return ID;
    }

    /**
     * Fenced on Kubernetes 1.35 and later, where the acquiring write's {@code resourceVersion} is a comparable integer;
     * the server version is read once, when the backend is created.
     */
    @Override
    public BackendTraits traits() {
        return traits;
    }

    @Override
    public void validateName(String name) {
        names.objectName(name);
    }

    /** The holder identity written into the Leases held here. */
    public String holderIdentity() {
        return holderIdentity;
    }

    /** The namespace holding the Lease objects. */
    public String namespace() {
        return namespace;
    }

    @Override
    public Optional<KubernetesGrant> tryAcquire(GrantRequest request) throws Exception {
        String name = request.name();
        String objectName = names.objectName(name);
        long tokenFloor = tokens.floor();
        Lease current = objects.read(objectName);
        long readAt = System.nanoTime();
        int duration = LeaseObjects.durationSeconds(request.ttl());
        Lease written;
        try {
            if (current == null) {
                written = objects.create(objectName, request.attempt(), duration);
            }
            else {
                if (observed.heldUnexpired(objectName, current, readAt, request.ttl())) {
                    return Optional.empty();
                }
                written = objects.take(current, request.attempt(), duration);
            }
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() == 409) {
                ownWriteAnswerLost(request, objectName, ex);
            }
            if (ex.getCode() == 409 || ex.getCode() == 404) {
                // Someone else wrote (or deleted) the object since our read: it is theirs, or changing; busy for now.
                return Optional.empty();
            }
            throw ex;
        }
        observed.forget(objectName);
        Long token = traits.issuesFencingTokens()
                ? tokens.of(name, written, tokenFloor, () -> objects.freeQuietly(name, written)) : null;
        KubernetesGrant grant = new KubernetesGrant(name, token, written);
        log.debug("Lease '" + name + "' acquired as Lease " + namespace + "/" + objectName + " by " + holderIdentity
                + grant.tokenText());
        return Optional.of(grant);
    }

    /**
     * Throws when a 409 answered a retry of this very request's write: the first try landed (the object carries this
     * request's attempt id and our identity) but its answer was lost, so the client sent it again. Read as busy, that
     * would block our own name for the whole lease duration. It is thrown as a failure rather than taken as the
     * grant: the write's own answer (its resourceVersion, the token) never arrived, and the object may have changed
     * since, so this request cannot tell its token for sure. The engine then abandons the request, which frees the
     * object only if it still carries this attempt id (conditional on the version read), and retries while the
     * caller may still wait.
     */
    private void ownWriteAnswerLost(GrantRequest request, String objectName, KubernetesClientException conflict)
            throws java.io.IOException {
        Lease now;
        try {
            now = objects.read(objectName);
        }
        catch (KubernetesClientException ex) {
            // Cannot tell whose write it was: a failure (abandoned, so freed if ours), not "busy" for the duration.
            ex.addSuppressed(conflict);
            throw ex;
        }
        if (objects.writtenBy(now, request.attempt())) {
            throw new java.io.IOException("Lease '" + request.name() + "': the write of this grant request reached "
                    + "Lease " + namespace + "/" + objectName + ", but its answer was lost and the retried write got "
                    + "409; the request is given up and its object freed", conflict);
        }
    }

    @Override
    public boolean renew(KubernetesGrant grant) throws Exception {
        try {
            grant.wrote(objects.renew(grant.last()));
            return true;
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() == 409 || ex.getCode() == 404) {
                log.debug("Lease '" + grant.name() + "'" + grant.tokenText() + " was written or deleted by someone else ("
                        + ex.getCode() + "): lost");
                return false;
            }
            throw ex;
        }
    }

    /** Frees the Lease object (no holder) if it is still as this grant last wrote it; does nothing otherwise. */
    @Override
    public void release(KubernetesGrant grant) throws Exception {
        try {
            objects.free(grant.last());
            log.debug("Lease '" + grant.name() + "'" + grant.tokenText() + " released");
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() == 409 || ex.getCode() == 404) {
                log.debug("Lease '" + grant.name() + "'" + grant.tokenText() + " was no longer ours to release ("
                        + ex.getCode() + ")");
                return;
            }
            throw ex;
        }
    }

    /**
     * Frees the Lease object if the failed request wrote it: it still carries that request's attempt id and our
     * holder identity. The update is conditional on the version just read, so a successor's grant is never touched.
     */
    @Override
    public void abandon(GrantRequest request) throws Exception {
        String objectName = names.objectName(request.name());
        Lease current = objects.read(objectName);
        if (!objects.writtenBy(current, request.attempt())) {
            return;
        }
        try {
            objects.free(current);
            log.info("Lease '" + request.name() + "': freed Lease " + namespace + "/" + objectName
                    + " written by a grant request that failed or was interrupted");
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() != 409 && ex.getCode() != 404) {
                throw ex;
            }
        }
    }

    /**
     * Waits on a watch of the Lease object for it to be freed or deleted. One watch per object serves every thread of
     * this backend waiting for it (a watch holds a connection, and a client allows only a few per host). When the
     * watch cannot be opened (or breaks), falls back to sleeping for {@code maxWait}: the engine polls again, with a
     * pause that grows by backoff. A held Lease whose holder stopped renewing sends no event: the engine's next
     * attempt after {@code maxWait} finds it expired.
     */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        String objectName = names.objectName(name);
        long until = System.nanoTime() + maxWait.toNanos();
        if (!useWatches) {
            sleepUntil(until);
            return;
        }
        ObjectWatches.ObjectWatch watch = watches.join(objectName, observed.version(objectName));
        try {
            if (watch.await(until)) {
                sleepUntil(until);
            }
        }
        finally {
            watches.leave(watch);
        }
    }

    /** Reads {@code /version}: the API server answers and tells which kind of leases it can serve. */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) {
        ServerVersion now = ServerVersion.of(client.getKubernetesVersion());
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("server", String.valueOf(client.getMasterUrl()));
        details.put("version", now.text());
        details.put("namespace", namespace);
        details.put("fencingTokens", now.comparesResourceVersions());
        return details;
    }

    private static void sleepUntil(long until) throws InterruptedException {
        long left = until - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /** How many observations of held Lease objects are kept, for tests. */
    int observations() {
        return observed.size();
    }
}
