package dev.lease.kubernetes;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;

import dev.lease.spi.Grant;
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
 * monotonic clock from the moment its read returned, plus a margin ({@link #takeoverMarginNanos}). Wall clocks of different nodes are never compared;
 * {@code renewTime} and {@code acquireTime} are written for people and other tools only. The holder writes a duration
 * of its ttl rounded up to whole seconds and counts its own validity from before its request, so its validity ends
 * before any competitor can take over (as long as the two clocks' rates differ by less than the margin). Every renewal writes a
 * new {@code renewTime}, so that it always changes the object and its {@code resourceVersion}.
 *
 * <p>The backend uses, and never closes, the {@link KubernetesClient} it is given. It needs {@code get},
 * {@code create}, {@code update} and {@code watch} on {@code leases} in its namespace.
 */
public final class KubernetesLeaseBackend implements LeaseBackend<KubernetesLeaseBackend.KubernetesGrant> {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "kubernetes";

    /** Marks the Lease object with the grant request that wrote it, so that an abandoned request finds its own. */
    static final String ATTEMPT_ANNOTATION = "lease.dev/attempt";

    private static final Log log = LogFactory.getLog(KubernetesLeaseBackend.class);

    private final KubernetesClient client;
    private final String namespace;
    private final LeaseObjectNames names;
    private final String holderIdentity;
    private final ServerVersion serverVersion;
    /** How many observations of held Lease objects are kept at most; see {@link Observations}. */
    static final int OBSERVATION_LIMIT = 10_000;

    private final Observations observed;
    /**
     * The highest token granted here, over all names: a last check that the server keeps KEP-5504's promise. One
     * number, not one per name (names may be per entity and unbounded), and a stronger check: resourceVersions are
     * cluster-wide, so a grant's write must get a greater one than every write that completed before it was sent,
     * whatever the name. Each request compares with the value read before it is sent, never with grants completing
     * meanwhile (those may rightly carry greater versions), so a server keeping its promise is never refused.
     */
    private final AtomicLong highestToken = new AtomicLong();
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
        this.watches = new ObjectWatches(client, namespace);
        this.serverVersion = ServerVersion.of(client.getKubernetesVersion());
        if (!serverVersion.comparesResourceVersions()) {
            log.info("Kubernetes API server " + client.getMasterUrl() + " is " + serverVersion.text()
                    + ": its resourceVersions are opaque, so Kubernetes leases are EFFICIENCY-only (no fencing tokens)");
        }
    }

    @Override
    public String id() {
        return ID;
    }

    /** True on Kubernetes 1.35 and later, where the acquiring write's {@code resourceVersion} is a comparable integer. */
    @Override
    public boolean issuesFencingTokens() {
        return serverVersion.comparesResourceVersions();
    }

    @Override
    public String whyNotFenced() {
        return "the kubernetes backend issues fencing tokens only on Kubernetes " + ServerVersion.COMPARABLE_RESOURCE_VERSIONS.text()
                + " or later, where resourceVersion is a comparable integer (KEP-5504), and the API server at "
                + client.getMasterUrl() + " reports " + serverVersion.text();
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
        long tokenFloor = highestToken.get();
        Lease current = leases().withName(objectName).get();
        long readAt = System.nanoTime();
        int duration = durationSeconds(request.ttl());
        Lease written;
        try {
            if (current == null) {
                written = leases().resource(newLease(objectName, request.attempt(), duration)).create();
            }
            else {
                if (heldUnexpired(objectName, current, readAt, request.ttl())) {
                    return Optional.empty();
                }
                written = leases().resource(taken(current, request.attempt(), duration)).update();
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
        KubernetesGrant grant = new KubernetesGrant(name,
                issuesFencingTokens() ? token(name, written, tokenFloor) : null, written);
        log.debug("Lease '" + name + "' acquired as Lease " + namespace + "/" + objectName + " by " + holderIdentity
                + (grant.token != null ? " (token " + grant.token + ")" : ""));
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
            now = leases().withName(objectName).get();
        }
        catch (KubernetesClientException ex) {
            // Cannot tell whose write it was: a failure (abandoned, so freed if ours), not "busy" for the duration.
            ex.addSuppressed(conflict);
            throw ex;
        }
        if (now != null && now.getSpec() != null && holderIdentity.equals(now.getSpec().getHolderIdentity())
                && request.attempt().equals(annotation(now))) {
            throw new java.io.IOException("Lease '" + request.name() + "': the write of this grant request reached "
                    + "Lease " + namespace + "/" + objectName + ", but its answer was lost and the retried write got "
                    + "409; the request is given up and its object freed", conflict);
        }
    }

    /**
     * Whether the Lease is held by someone (us included: this instance's grants are not re-entrant) and not yet
     * expired as observed here: unchanged since our first read of this resourceVersion for less than its duration.
     */
    private boolean heldUnexpired(String objectName, Lease current, long readAt, Duration ttl) {
        LeaseSpec spec = current.getSpec();
        if (spec == null || spec.getHolderIdentity() == null || spec.getHolderIdentity().isEmpty()) {
            // Free: nobody's expiry to judge any more (a later holder is observed afresh).
            observed.forget(objectName);
            return false;
        }
        String version = current.getMetadata().getResourceVersion();
        long firstSeenAt = observed.firstSeenAt(objectName, version, readAt);
        Integer seconds = spec.getLeaseDurationSeconds();
        // A holder that wrote no (or no positive) duration is given our own ttl, rounded up as we would write it.
        long durationNanos = TimeUnit.SECONDS.toNanos(seconds != null && seconds > 0 ? seconds : durationSeconds(ttl));
        return readAt - firstSeenAt < durationNanos + takeoverMarginNanos(durationNanos);
    }

    @Override
    public boolean renew(KubernetesGrant grant) throws Exception {
        Lease last = grant.last;
        Lease next = new LeaseBuilder(last).editSpec()
                .withRenewTime(after(last.getSpec().getRenewTime()))
                .endSpec().build();
        try {
            grant.last = leases().resource(next).update();
            return true;
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() == 409 || ex.getCode() == 404) {
                log.debug("Lease '" + grant.name + "'" + tokenText(grant) + " was written or deleted by someone else ("
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
            leases().resource(freed(grant.last)).update();
            log.debug("Lease '" + grant.name + "'" + tokenText(grant) + " released");
        }
        catch (KubernetesClientException ex) {
            if (ex.getCode() == 409 || ex.getCode() == 404) {
                log.debug("Lease '" + grant.name + "'" + tokenText(grant) + " was no longer ours to release ("
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
        Lease current = leases().withName(objectName).get();
        if (current == null || current.getSpec() == null
                || !holderIdentity.equals(current.getSpec().getHolderIdentity())
                || !request.attempt().equals(annotation(current))) {
            return;
        }
        try {
            leases().resource(freed(current)).update();
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

    private NonNamespaceOperation<Lease, LeaseList, Resource<Lease>> leases() {
        return client.leases().inNamespace(namespace);
    }

    private Lease newLease(String objectName, String attempt, int duration) {
        ZonedDateTime now = now();
        return new LeaseBuilder()
                .withNewMetadata().withName(objectName).withNamespace(namespace)
                .addToAnnotations(ATTEMPT_ANNOTATION, attempt).endMetadata()
                .withNewSpec().withHolderIdentity(holderIdentity).withLeaseDurationSeconds(duration)
                .withAcquireTime(now).withRenewTime(now).withLeaseTransitions(0).endSpec()
                .build();
    }

    /** The object as read, taken by us: the update carries the read resourceVersion, so it is conditional on it. */
    private Lease taken(Lease current, String attempt, int duration) {
        LeaseSpec spec = current.getSpec();
        int transitions = spec == null || spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions();
        ZonedDateTime now = after(spec == null ? null : spec.getRenewTime());
        return new LeaseBuilder(current)
                .editMetadata().addToAnnotations(ATTEMPT_ANNOTATION, attempt).endMetadata()
                .editOrNewSpec().withHolderIdentity(holderIdentity).withLeaseDurationSeconds(duration)
                .withAcquireTime(now).withRenewTime(now).withLeaseTransitions(transitions + 1).endSpec()
                .build();
    }

    private static Lease freed(Lease last) {
        return new LeaseBuilder(last)
                .editMetadata().removeFromAnnotations(ATTEMPT_ANNOTATION).endMetadata()
                .editOrNewSpec().withHolderIdentity(null).withRenewTime(after(last.getSpec() == null ? null
                        : last.getSpec().getRenewTime())).endSpec()
                .build();
    }

    /**
     * The token of the write that just granted {@code name}: its resourceVersion as a number, refused unless it is a
     * positive integer greater than every token granted here before the request was sent ({@code floor}); a server
     * keeping KEP-5504's promise passes.
     */
    private long token(String name, Lease written, long floor) {
        String version = written.getMetadata().getResourceVersion();
        long token;
        try {
            token = Long.parseLong(version);
        }
        catch (NumberFormatException | NullPointerException ex) {
            token = -1;
        }
        long value = token;
        // Strictly greater: a token equal to an earlier one would let two holders pass the same fence.
        if (value <= 0 || value <= floor) {
            String why = value <= 0 ? "its resourceVersion '" + version + "' is not a positive integer"
                    : "its resourceVersion " + value + " is not greater than the token " + floor
                            + " granted earlier here";
            freeQuietly(name, written);
            throw new IllegalStateException("Lease '" + name + "' was granted, but " + why + ", so it cannot serve as "
                    + "a fencing token (the API server at " + client.getMasterUrl() + " reports " + serverVersion.text()
                    + "; comparable resourceVersions need " + ServerVersion.COMPARABLE_RESOURCE_VERSIONS.text() + "+). "
                    + "The grant was given up.");
        }
        highestToken.accumulateAndGet(value, Math::max);
        return value;
    }

    /** How many observations of held Lease objects are kept, for tests. */
    int observations() {
        return observed.size();
    }

    private void freeQuietly(String name, Lease written) {
        try {
            leases().resource(freed(written)).update();
        }
        catch (RuntimeException ex) {
            log.warn("Lease '" + name + "': could not free the Lease object of a refused grant; it expires after "
                    + "its duration: " + ex);
        }
    }

    private static String annotation(Lease lease) {
        Map<String, String> annotations = lease.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(ATTEMPT_ANNOTATION);
    }

    /**
     * How much longer than the lease duration a competitor waits before it takes over: a tenth of the duration, at
     * least one second. Without it, a ttl of whole seconds leaves the holder's validity and the takeover apart only by
     * the request's latency, and safety would rest on the two monotonic clocks running at exactly the same rate. Clocks
     * kept by NTP differ in rate by well under 0.1%, so a tenth leaves room for far worse ones (a drifting VM clock);
     * the second covers what a share of a short lease cannot: timer and scheduling delays on a loaded host, and the
     * holder's thread noticing the end of its validity. It only ever delays a takeover, never a release.
     */
    static long takeoverMarginNanos(long durationNanos) {
        return Math.max(TimeUnit.SECONDS.toNanos(1), durationNanos / 10);
    }

    /** The ttl in whole seconds, rounded up (a competitor waits at least the ttl), at least one. */
    static int durationSeconds(Duration ttl) {
        long seconds = ttl.getSeconds() + (ttl.getNano() > 0 ? 1 : 0);
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, seconds));
    }

    private static ZonedDateTime now() {
        return ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);
    }

    /**
     * Now, or a microsecond after {@code previous} when the wall clock has not moved past it: every write must change
     * the object, and an update that changes nothing bumps no resourceVersion.
     */
    static ZonedDateTime after(ZonedDateTime previous) {
        ZonedDateTime now = now();
        if (previous != null && !now.isAfter(previous)) {
            return previous.plus(1, ChronoUnit.MICROS);
        }
        return now;
    }

    private static String tokenText(KubernetesGrant grant) {
        return grant.token != null ? " (token " + grant.token + ")" : "";
    }

    /**
     * A grant of this backend: the lease name, the token (the acquiring write's resourceVersion) and the Lease object
     * as last written, whose resourceVersion the next renewal or the release is conditional on. Equal only to itself.
     */
    static final class KubernetesGrant implements Grant {

        private final String name;
        private final Long token;
        private volatile Lease last;

        KubernetesGrant(String name, Long token, Lease last) {
            this.name = name;
            this.token = token;
            this.last = last;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public OptionalLong token() {
            return token == null ? OptionalLong.empty() : OptionalLong.of(token);
        }

        /** The resourceVersion the next write of this grant is conditional on. */
        String resourceVersion() {
            return last.getMetadata().getResourceVersion();
        }

        @Override
        public String toString() {
            return "KubernetesGrant[" + name + (token != null ? ", token " + token : "") + "]";
        }
    }
}
