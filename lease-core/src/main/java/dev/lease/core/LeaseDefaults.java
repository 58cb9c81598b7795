package dev.lease.core;

import java.time.Duration;
import java.util.Objects;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;

/**
 * The ttl and renewal interval applied to leases that do not set their own.
 *
 * @param ttl {@code lease.default-ttl}
 * @param renewEvery {@code lease.renew-every}, or null for ttl/3
 */
public record LeaseDefaults(Duration ttl, Duration renewEvery) {

    /** Checks the defaults on their own: a positive ttl, and a renewal interval under half of it. */
    public LeaseDefaults {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new LeaseConfigurationException("lease.default-ttl=" + Durations.format(ttl) + " is not positive.",
                    "set lease.default-ttl to a positive duration such as 30s.");
        }
        if (renewEvery != null) {
            Timing.check("lease.default-ttl / lease.renew-every", ttl, renewEvery);
        }
    }

    /** Defaults of 30 s ttl, renewed every 10 s. */
    public static LeaseDefaults standard() {
        return new LeaseDefaults(Duration.ofSeconds(30), null);
    }
}
