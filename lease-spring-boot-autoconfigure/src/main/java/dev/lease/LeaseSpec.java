package dev.lease;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * An immutable description of a lease to acquire: {@code LeaseSpec.of(name, kind).withTtl(d).withWaitFor(d)}.
 * Unset ttl and renewal interval fall back to {@code lease.default-ttl} and {@code lease.renew-every} (else
 * ttl/3).
 */
public final class LeaseSpec {

    private final String name;
    private final LeaseKind kind;
    private final Duration ttl;
    private final Duration renewEvery;
    private final Duration waitFor;

    private LeaseSpec(String name, LeaseKind kind, Duration ttl, Duration renewEvery, Duration waitFor) {
        this.name = Objects.requireNonNull(name, "name");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.ttl = positiveOrNull(ttl, "ttl");
        this.renewEvery = positiveOrNull(renewEvery, "renewEvery");
        this.waitFor = Objects.requireNonNull(waitFor, "waitFor");
        if (waitFor.isNegative()) {
            throw new IllegalArgumentException("waitFor must not be negative, got " + waitFor + " for lease '" + name + "'");
        }
    }

    /** A lease on {@code name} of the given kind, with default ttl and renewal, that does not wait when busy. */
    public static LeaseSpec of(String name, LeaseKind kind) {
        return new LeaseSpec(name, kind, null, null, Duration.ZERO);
    }

    /** A copy with this time to live. */
    public LeaseSpec withTtl(Duration ttl) {
        return new LeaseSpec(name, kind, Objects.requireNonNull(ttl, "ttl"), renewEvery, waitFor);
    }

    /** A copy renewed at this interval, which must be less than half the ttl. */
    public LeaseSpec withRenewEvery(Duration renewEvery) {
        return new LeaseSpec(name, kind, ttl, Objects.requireNonNull(renewEvery, "renewEvery"), waitFor);
    }

    /** A copy that waits up to {@code waitFor} for a busy lease. */
    public LeaseSpec withWaitFor(Duration waitFor) {
        return new LeaseSpec(name, kind, ttl, renewEvery, waitFor);
    }

    /** The lease name. */
    public String name() {
        return name;
    }

    /** The lease kind. */
    public LeaseKind kind() {
        return kind;
    }

    /** The time to live, if set here rather than by {@code lease.default-ttl}. */
    public Optional<Duration> ttl() {
        return Optional.ofNullable(ttl);
    }

    /** The renewal interval, if set here rather than by {@code lease.renew-every} or ttl/3. */
    public Optional<Duration> renewEvery() {
        return Optional.ofNullable(renewEvery);
    }

    /** How long to wait for a busy lease; zero means do not wait. */
    public Duration waitFor() {
        return waitFor;
    }

    private static Duration positiveOrNull(Duration d, String what) {
        if (d != null && (d.isZero() || d.isNegative())) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LeaseSpec s && name.equals(s.name) && kind == s.kind && Objects.equals(ttl, s.ttl)
                && Objects.equals(renewEvery, s.renewEvery) && waitFor.equals(s.waitFor);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, kind, ttl, renewEvery, waitFor);
    }

    @Override
    public String toString() {
        return "LeaseSpec[name=" + name + ", kind=" + kind + ", ttl=" + ttl + ", renewEvery=" + renewEvery
                + ", waitFor=" + waitFor + "]";
    }
}
