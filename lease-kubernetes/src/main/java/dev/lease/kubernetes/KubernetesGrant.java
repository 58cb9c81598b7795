package dev.lease.kubernetes;

import java.util.OptionalLong;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;

import dev.lease.spi.Grant;

/**
 * A grant of the Kubernetes backend: the lease name, the token (the acquiring write's resourceVersion) and the Lease
 * object as last written, whose resourceVersion the next renewal or the release is conditional on. Equal only to
 * itself.
 */
final class KubernetesGrant implements Grant {

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

    /** The object as this grant last wrote it. */
    Lease last() {
        return last;
    }

    /** Records the object as the grant's latest write returned it. */
    void wrote(Lease written) {
        this.last = written;
    }

    /** The resourceVersion the next write of this grant is conditional on. */
    String resourceVersion() {
        return last.getMetadata().getResourceVersion();
    }

    /** {@code " (token N)"}, or nothing for an unfenced grant: for log lines. */
    String tokenText() {
        return token != null ? " (token " + token + ")" : "";
    }

    @Override
    public String toString() {
        return "KubernetesGrant[" + name + (token != null ? ", token " + token : "") + "]";
    }
}
