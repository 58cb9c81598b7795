package dev.lease.core;

import java.time.Duration;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LeaseNames;

/**
 * Where a lease call starts: what the caller asks for, checked against the engine's routing and defaults, becomes a
 * {@link LeaseRequest}. The same checks serve at startup ({@link LeaseEngine#validate}, {@link
 * LeaseEngine#validateName}), so that a lease known before its first call fails the startup instead.
 */
final class LeaseRequests {

    private final BackendRouter router;
    private final LeaseDefaults defaults;
    private final GrantFencing fencing;

    LeaseRequests(BackendRouter router, LeaseDefaults defaults, GrantFencing fencing) {
        this.router = router;
        this.defaults = defaults;
        this.fencing = fencing;
    }

    /**
     * @throws IllegalArgumentException when the name breaks a rule, the common ones or the backend's
     * @throws LeaseConfigurationException when the kind, timing or fence at grant cannot work
     */
    LeaseRequest resolve(LeaseSpec spec) {
        String name = LeaseNames.validate(spec.name());
        String culprit = "lease '" + name + "'";
        LeaseBackend<?> backend = backendFor(culprit, spec.kind());
        backend.validateName(name);
        Timing timing = Timing.resolve(culprit, spec.ttl().orElse(null), spec.renewEvery().orElse(null), defaults,
                backend);
        if (spec.fence().isPresent()) {
            fencing.check(culprit, spec.kind());
        }
        return new LeaseRequest(name, spec.kind(), backend, timing, spec.waitFor(), spec.fence().orElse(null),
                spec.nameTemplate(), spec.holdAtLeast());
    }

    /** As {@link LeaseEngine#validate}. */
    void validate(String culprit, LeaseKind kind, Duration ttl, Duration renewEvery, boolean fenceAtGrant) {
        if (fenceAtGrant) {
            fencing.check(culprit, kind);
        }
        LeaseBackend<?> backend = backendFor(culprit, kind);
        Timing.resolve(culprit, ttl, renewEvery, defaults, backend);
    }

    /** As {@link LeaseEngine#validateName}. */
    void validateName(String culprit, LeaseKind kind, String name) {
        LeaseBackend<?> backend = backendFor(culprit, kind);
        backend.validateName(LeaseNames.validate(name));
    }

    /** The backend serving {@code kind}, without the checks of a lease (for messages and tests). */
    LeaseBackend<?> backendFor(LeaseKind kind) {
        return router.backendFor(kind);
    }

    private LeaseBackend<?> backendFor(String culprit, LeaseKind kind) {
        try {
            return router.backendFor(kind);
        }
        catch (LeaseConfigurationException ex) {
            throw new LeaseConfigurationException(culprit + ": " + ex.description(), ex.action());
        }
    }
}
