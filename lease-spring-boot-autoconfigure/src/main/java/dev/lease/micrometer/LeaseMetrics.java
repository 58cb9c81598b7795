package dev.lease.micrometer;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngineListener;
import dev.lease.core.LossCause;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;

/**
 * Meters and observes a lease engine's leases, under the contract's names: the {@code lease.acquire} observation
 * (its timer, and its span when there is a tracer), the {@code lease.held} long task timer, and the
 * {@code lease.lost} and {@code lease.renewals} counters, and the {@code lease.leader} gauge of each election
 * ({@link #bindElections}). Every meter is tagged by the lease name as declared
 * ({@link dev.lease.LeaseSpec#nameTemplate()}), its kind and its backend, never by the evaluated name.
 *
 * <p>An election's campaigns are not acquires: they have meters of their own, the {@code lease.campaign} timer and
 * the {@code lease.campaign.active} long task timer, tagged by {@code election} as the gauge is. They are meters, not
 * an observation: a follower campaigns for as long as another instance leads, which no trace should stay open for.
 * A term, once won, is a held lease like any other ({@code lease.held}, {@code lease.renewals}, {@code lease.lost}).
 */
public final class LeaseMetrics implements LeaseEngineListener {

    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final LeaseAcquireObservationConvention convention;

    /**
     * @param meters where {@code lease.held}, {@code lease.lost} and {@code lease.renewals} are registered
     * @param observations where {@code lease.acquire} is observed; its meter handler makes the {@code lease.acquire}
     *        timer, its tracing handler the span
     * @param convention replaces {@link DefaultLeaseAcquireObservationConvention}, or null to keep it
     */
    public LeaseMetrics(MeterRegistry meters, ObservationRegistry observations,
            LeaseAcquireObservationConvention convention) {
        this.meters = Objects.requireNonNull(meters, "meters");
        this.observations = Objects.requireNonNull(observations, "observations");
        this.convention = convention;
    }

    @Override
    public Acquisition acquiring(LeaseDescription lease) {
        LeaseAcquireContext context = new LeaseAcquireContext(lease.name(), lease.nameTemplate(), lease.kind(),
                lease.backend());
        Observation observation = LeaseObservation.ACQUIRE.observation(convention,
                DefaultLeaseAcquireObservationConvention.INSTANCE, () -> context, observations).start();
        // The store calls of the acquire run on this thread: in scope, a client that traces them nests its spans.
        Observation.Scope scope = observation.openScope();
        return new Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                context.acquired(token);
                end();
                return held(lease);
            }

            @Override
            public void busy() {
                context.ended("busy");
                end();
            }

            @Override
            public void failed(Throwable error) {
                context.ended("error");
                observation.error(error);
                end();
            }

            private void end() {
                scope.close();
                observation.stop();
            }
        };
    }

    @Override
    public Campaign campaigning(LeaseDescription election) {
        Tags tags = Tags.of("election", election.name(), "lease.kind", election.kind().name(), "lease.backend",
                election.backend());
        LongTaskTimer.Sample active = LongTaskTimer.builder("lease.campaign.active")
                .description("Campaigns for leadership in progress: this instance does not lead")
                .tags(tags).register(meters).start();
        return new Campaign() {
            @Override
            public Runnable won(OptionalLong token) {
                end("won");
                return held(election);
            }

            @Override
            public void stopped() {
                end("stopped");
            }

            private void end(String outcome) {
                Timer.builder("lease.campaign")
                        .description("Campaigns for leadership, from their start until won or stopped")
                        .tags(tags).tag("outcome", outcome).register(meters)
                        .record(active.stop(), TimeUnit.NANOSECONDS);
            }
        };
    }

    @Override
    public void renewed(LeaseDescription lease, boolean succeeded) {
        Counter.builder("lease.renewals").description("Renewals of held leases, by outcome")
                .tags(tags(lease)).tag("outcome", succeeded ? "ok" : "failed").register(meters).increment();
    }

    @Override
    public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
        Counter.builder("lease.lost").description("Held leases lost, by cause; each interrupted its holder")
                .tags(tags(lease)).tag("cause", cause.tag()).register(meters).increment();
    }

    /**
     * Registers the {@code lease.leader} gauge of every election: 1 while this instance leads it, else 0, tagged by
     * {@code election}.
     *
     * @param elections the application's elections
     */
    public void bindElections(LeaderElections elections) {
        for (Leadership leadership : elections.all()) {
            Gauge.builder("lease.leader", leadership, it -> it.isLeader() ? 1 : 0)
                    .description("1 while this instance leads the election, else 0")
                    .tag("election", leadership.election()).register(meters);
        }
    }

    /** Starts the {@code lease.held} task of a lease just granted; returns what ends it. */
    private Runnable held(LeaseDescription lease) {
        LongTaskTimer.Sample held = LongTaskTimer.builder("lease.held")
                .description("Leases held by this instance, and for how long")
                .tags(tags(lease)).register(meters).start();
        return held::stop;
    }

    private static Tags tags(LeaseDescription lease) {
        return Tags.of("lease.name", lease.nameTemplate(), "lease.kind", lease.kind().name(), "lease.backend",
                lease.backend());
    }
}
