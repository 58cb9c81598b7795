package dev.lease.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.LeaseBackend;

/**
 * The resolved ttl and renewal interval of one lease.
 *
 * @param ttl how long the lease lives without renewal
 * @param renewEvery the renewal interval, less than half the ttl
 * @param validity how long after the request a grant may be relied on: the ttl less the backend's
 *        {@link BackendTraits#validityMargin margin} (clock drift between the store's servers, say)
 */
record Timing(Duration ttl, Duration renewEvery, Duration validity) {

    static Timing resolve(String culpritName, Duration ttl, Duration renewEvery, LeaseDefaults defaults,
            LeaseBackend<?> backend) {
        Duration t = ttl != null ? ttl : defaults.ttl();
        Duration r = renewEvery != null ? renewEvery
                : defaults.renewEvery() != null ? defaults.renewEvery() : t.dividedBy(3);
        String culprit = renewEvery == null && defaults.renewEvery() != null
                ? culpritName + " (renewEvery from lease.renew-every)" : culpritName;
        check(culprit, t, r);
        BackendTraits traits = backend.traits();
        traits.maxTtl().ifPresent(max -> {
            if (t.compareTo(max) > 0) {
                throw new LeaseConfigurationException(culprit + ": ttl " + Durations.format(t) + " exceeds what the "
                        + backend.id() + " backend can honour (" + Durations.format(max) + ").",
                        "lower the ttl to at most " + Durations.format(max) + ", or raise the backend's limit (for "
                                + "ZooKeeper, lease.zookeeper.session-timeout and the server's maxSessionTimeout).");
            }
        });
        Duration margin = traits.validityMargin(t);
        if (margin.isNegative() || margin.compareTo(t.minus(r)) >= 0) {
            throw new LeaseConfigurationException(culprit + ": the " + backend.id() + " backend keeps "
                    + Durations.format(margin) + " of the ttl " + Durations.format(t) + " as a safety margin, which "
                    + "leaves no validity after the first renewal interval (" + Durations.format(r) + ").",
                    "raise the ttl well above the margin (for redlock, ttl × lease.redlock.clock-drift-factor + 2 ms).");
        }
        return new Timing(t, r, t.minus(margin));
    }

    static void check(String culprit, Duration ttl, Duration renewEvery) {
        if (renewEvery.isZero() || renewEvery.isNegative()) {
            throw new LeaseConfigurationException(culprit + ": renewEvery " + Durations.format(renewEvery)
                    + " is not positive.", "use a positive interval below half the ttl, e.g. ttl/3 = " + third(ttl) + ".");
        }
        if (renewEvery.multipliedBy(2).compareTo(ttl) >= 0) {
            throw new LeaseConfigurationException(
                    culprit + ": renewEvery " + Durations.format(renewEvery) + " is not less than half the ttl "
                            + Durations.format(ttl)
                            + ", so a single slow or failed renewal would let the lease expire while in use.",
                    "renew more often (e.g. every ttl/3 = " + third(ttl) + ") or raise the ttl.");
        }
    }

    /** Whole milliseconds, so that the suggestion can be copied into the configuration. */
    private static String third(Duration ttl) {
        return Durations.format(ttl.dividedBy(3).truncatedTo(ChronoUnit.MILLIS));
    }
}
