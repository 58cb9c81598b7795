package dev.lease.micrometer;

import java.util.Objects;
import java.util.OptionalLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
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
                LongTaskTimer.Sample held = LongTaskTimer.builder("lease.held")
                        .description("Leases held by this instance, and for how long")
                        .tags(tags(lease)).register(meters).start();
                return held::stop;
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

    private static Tags tags(LeaseDescription lease) {
        return Tags.of("lease.name", lease.nameTemplate(), "lease.kind", lease.kind().name(), "lease.backend",
                lease.backend());
    }
}
