package dev.lease.micrometer;

import java.util.OptionalLong;

import io.micrometer.observation.Observation;

import dev.lease.LeaseKind;

/** What an {@link LeaseObservation#ACQUIRE} observation knows about its acquire, for conventions to read. */
public final class LeaseAcquireContext extends Observation.Context {

    /** The outcome while the acquire is still running. */
    public static final String PENDING = "pending";

    private final String leaseName;
    private final String nameTemplate;
    private final LeaseKind kind;
    private final String backend;
    private volatile String outcome = PENDING;
    private volatile OptionalLong token = OptionalLong.empty();

    /**
     * @param leaseName the lease name as evaluated, such as {@code invoice-42}
     * @param nameTemplate the lease name as declared, such as {@code invoice-#{#id}}
     * @param kind the lease kind
     * @param backend the id of the backend the lease is routed to
     */
    public LeaseAcquireContext(String leaseName, String nameTemplate, LeaseKind kind, String backend) {
        this.leaseName = leaseName;
        this.nameTemplate = nameTemplate;
        this.kind = kind;
        this.backend = backend;
    }

    /** @return the lease name as evaluated, such as {@code invoice-42} */
    public String getLeaseName() {
        return leaseName;
    }

    /** @return the lease name as declared, such as {@code invoice-#{#id}} */
    public String getNameTemplate() {
        return nameTemplate;
    }

    /** @return the lease kind */
    public LeaseKind getKind() {
        return kind;
    }

    /** @return the id of the backend the lease is routed to */
    public String getBackend() {
        return backend;
    }

    /** @return {@code acquired}, {@code busy}, {@code error}, or {@link #PENDING} while the acquire runs */
    public String getOutcome() {
        return outcome;
    }

    /** @return the token of the grant, empty until granted and on backends without tokens */
    public OptionalLong getToken() {
        return token;
    }

    void acquired(OptionalLong token) {
        this.token = token;
        this.outcome = "acquired";
    }

    void ended(String outcome) {
        this.outcome = outcome;
    }
}
