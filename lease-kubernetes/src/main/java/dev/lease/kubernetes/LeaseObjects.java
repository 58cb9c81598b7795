package dev.lease.kubernetes;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;

/**
 * The Lease objects of one namespace as this instance reads and writes them: every write is an update conditional on
 * the {@code resourceVersion} of the object it starts from (or a create), and every write changes the object, so its
 * {@code resourceVersion} always moves. The objects a grant request writes carry its attempt id
 * ({@value #ATTEMPT_ANNOTATION}), so that an abandoned request finds its own.
 */
final class LeaseObjects {

    /** Marks the Lease object with the grant request that wrote it, so that an abandoned request finds its own. */
    static final String ATTEMPT_ANNOTATION = "lease.dev/attempt";

    private static final Log log = LogFactory.getLog(KubernetesLeaseBackend.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String holderIdentity;

    LeaseObjects(KubernetesClient client, String namespace, String holderIdentity) {
        this.client = client;
        this.namespace = namespace;
        this.holderIdentity = holderIdentity;
    }

    /** The object as the server has it now, or null when there is none. */
    Lease read(String objectName) {
        return leases().withName(objectName).get();
    }

    /** Creates the object, held by us for {@code duration} seconds. */
    Lease create(String objectName, String attempt, int duration) {
        ZonedDateTime now = now();
        return leases().resource(new LeaseBuilder()
                .withNewMetadata().withName(objectName).withNamespace(namespace)
                .addToAnnotations(ATTEMPT_ANNOTATION, attempt).endMetadata()
                .withNewSpec().withHolderIdentity(holderIdentity).withLeaseDurationSeconds(duration)
                .withAcquireTime(now).withRenewTime(now).withLeaseTransitions(0).endSpec()
                .build()).create();
    }

    /** Takes the object as read: the update carries the read resourceVersion, so it is conditional on it. */
    Lease take(Lease current, String attempt, int duration) {
        LeaseSpec spec = current.getSpec();
        int transitions = spec == null || spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions();
        ZonedDateTime now = after(spec == null ? null : spec.getRenewTime());
        return leases().resource(new LeaseBuilder(current)
                .editMetadata().addToAnnotations(ATTEMPT_ANNOTATION, attempt).endMetadata()
                .editOrNewSpec().withHolderIdentity(holderIdentity).withLeaseDurationSeconds(duration)
                .withAcquireTime(now).withRenewTime(now).withLeaseTransitions(transitions + 1).endSpec()
                .build()).update();
    }

    /** Writes a new {@code renewTime} into the object as last written, conditional on its resourceVersion. */
    Lease renew(Lease last) {
        return leases().resource(new LeaseBuilder(last).editSpec()
                .withRenewTime(after(last.getSpec().getRenewTime()))
                .endSpec().build()).update();
    }

    /** Frees the object (no holder) if it is still as {@code last}; a 409 or 404 otherwise. */
    Lease free(Lease last) {
        return leases().resource(new LeaseBuilder(last)
                .editMetadata().removeFromAnnotations(ATTEMPT_ANNOTATION).endMetadata()
                .editOrNewSpec().withHolderIdentity(null).withRenewTime(after(last.getSpec() == null ? null
                        : last.getSpec().getRenewTime())).endSpec()
                .build()).update();
    }

    /** {@link #free}, logging instead of throwing: for a grant that is given up on the spot. */
    void freeQuietly(String name, Lease written) {
        try {
            free(written);
        }
        catch (RuntimeException ex) {
            log.warn("Lease '" + name + "': could not free the Lease object of a refused grant; it expires after "
                    + "its duration: " + ex);
        }
    }

    /** Whether the object was written by the grant request {@code attempt} of this instance. */
    boolean writtenBy(Lease lease, String attempt) {
        return lease != null && lease.getSpec() != null && holderIdentity.equals(lease.getSpec().getHolderIdentity())
                && attempt.equals(attempt(lease));
    }

    private static String attempt(Lease lease) {
        Map<String, String> annotations = lease.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(ATTEMPT_ANNOTATION);
    }

    private NonNamespaceOperation<Lease, LeaseList, Resource<Lease>> leases() {
        return client.leases().inNamespace(namespace);
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
}
