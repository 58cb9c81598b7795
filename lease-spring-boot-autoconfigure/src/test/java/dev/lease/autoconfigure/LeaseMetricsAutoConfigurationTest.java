package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.Deque;
import java.util.List;

import javax.sql.DataSource;

import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.micrometer.DefaultLeaseAcquireObservationConvention;
import dev.lease.micrometer.LeaseAcquireContext;
import dev.lease.micrometer.LeaseAcquireObservationConvention;
import dev.lease.micrometer.LeaseMetrics;

/** The contract's meters (DESIGN.md §7), with and without Micrometer, Spring Boot's observation support, a tracer. */
class LeaseMetricsAutoConfigurationTest {

    private static final LeaseSpec INVOICE = LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS)
            .withNameTemplate("invoice-#{#id}");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    ObservationAutoConfiguration.class, LeaseAutoConfiguration.class,
                    LeaseMetricsAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory");

    @Test
    void everyMeterOfTheContractIsTaggedByTheNameAsDeclared() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LeaseTemplate leases = context.getBean(LeaseTemplate.class);
            try (Lease held = leases.acquire(INVOICE)) {
                assertThat(meters.get("lease.held").tag("lease.name", "invoice-#{#id}").tag("lease.kind", "CORRECTNESS")
                        .tag("lease.backend", "in-memory").longTaskTimer().activeTasks()).isEqualTo(1);
                assertThat(leases.tryAcquire(INVOICE)).isEmpty();
                context.getBean(InMemoryLeaseBackend.class).revoke("invoice-42");
                assertThat(held.isValid()).isFalse();
            }
            assertThat(meters.get("lease.acquire").tag("lease.name", "invoice-#{#id}").tag("outcome", "acquired")
                    .timer().count()).isEqualTo(1);
            assertThat(meters.get("lease.acquire").tag("outcome", "busy").timer().count()).isEqualTo(1);
            assertThat(meters.get("lease.held").longTaskTimer().activeTasks()).isZero();
            assertThat(meters.get("lease.lost").tag("cause", "backend-reported").tag("lease.name", "invoice-#{#id}")
                    .counter().count()).isEqualTo(1);
            assertThat(meters.find("lease.acquire").tag("lease.name", "invoice-42").meters())
                    .as("the evaluated name is never a tag").isEmpty();
        });
    }

    @Test
    void aLeasedMethodIsTaggedByItsNameAttributeAsWritten() {
        runner.withUserConfiguration(Billing.class).run(context -> {
            Billing billing = context.getBean(Billing.class);
            billing.bill(42);
            billing.bill(43);
            assertThat(context.getBean(MeterRegistry.class).get("lease.acquire").tag("outcome", "acquired")
                    .tag("lease.name", "invoice-#{#id}").timer().count()).isEqualTo(2);
        });
    }

    @Test
    void eachElectionHasALeaderGauge() {
        runner.withPropertyValues("lease.leader.elections.reports.kind=EFFICIENCY").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            dev.lease.leader.Leadership reports = context.getBean(dev.lease.leader.LeaderElections.class)
                    .get("reports");
            org.awaitility.Awaitility.await().atMost(dev.lease.testing.TestTiming.seconds(10)).until(
                    () -> meters.get("lease.leader").tag("election", "reports").gauge().value() == 1.0);
            reports.yieldLeadership();
            assertThat(meters.get("lease.leader").tag("election", "reports").gauge().value()).isZero();
        });
    }

    /**
     * Campaigns are not acquires (issue 32, item 7): a follower that never leads shows a campaign in progress, not an
     * acquire always pending, and ends it as stopped when its context stops; the leader's campaign is timed as won,
     * not as an acquire, and its term is a held lease.
     */
    @Test
    void anElectionsCampaignsAreMeteredApartFromAcquires() {
        InMemoryLeaseBackend store = new InMemoryLeaseBackend();
        ApplicationContextRunner instance = runner.withBean(InMemoryLeaseBackend.class, () -> store)
                .withPropertyValues("lease.leader.elections.reports.kind=EFFICIENCY");
        instance.run(leader -> {
            MeterRegistry meters = leader.getBean(MeterRegistry.class);
            await().atMost(seconds(10)).until(() -> leadership(leader).isLeader());
            assertThat(acquireMeters(meters)).as("the leader's campaign is not an acquire").isEmpty();
            assertThat(meters.get("lease.campaign").tag("election", "reports").tag("outcome", "won")
                    .tag("lease.kind", "EFFICIENCY").tag("lease.backend", "in-memory").timer().count()).isEqualTo(1);
            assertThat(meters.get("lease.campaign.active").tag("election", "reports").longTaskTimer().activeTasks())
                    .isZero();
            assertThat(meters.get("lease.held").tag("lease.name", "reports").longTaskTimer().activeTasks())
                    .as("the term is a held lease").isEqualTo(1);
            instance.run(follower -> {
                MeterRegistry followed = follower.getBean(MeterRegistry.class);
                // Whichever way its campaign is metered, the follower's first attempt is waiting by then.
                await().atMost(seconds(10)).until(() -> !acquireMeters(followed).isEmpty()
                        || !followed.find("lease.campaign.active").longTaskTimers().isEmpty());
                assertThat(acquireMeters(followed)).as("a follower's attempts are not acquires").isEmpty();
                assertThat(followed.get("lease.campaign.active").tag("election", "reports").longTaskTimer()
                        .activeTasks()).as("the follower campaigns").isEqualTo(1);
                assertThat(followed.find("lease.campaign").timers()).as("no campaign ended yet").isEmpty();
                assertThat(leadership(follower).isLeader()).isFalse();
                // Stopped, not closed: Boot closes the meter registry before the elections of a context it closes.
                follower.stop();
                assertThat(followed.get("lease.campaign").tag("election", "reports").tag("outcome", "stopped")
                        .timer().count()).as("the follower's campaign ended with its context").isEqualTo(1);
                assertThat(followed.get("lease.campaign.active").longTaskTimer().activeTasks()).isZero();
                assertThat(acquireMeters(followed)).isEmpty();
            });
            assertThat(leadership(leader).isLeader()).as("still leads").isTrue();
        });
    }

    private static Leadership leadership(ApplicationContext context) {
        return context.getBean(LeaderElections.class).get("reports");
    }

    /** Any meter of the {@code lease.acquire} observation: its timer, or its long task timer while one is pending. */
    private static List<String> acquireMeters(MeterRegistry meters) {
        return meters.getMeters().stream().map(meter -> meter.getId().getName())
                .filter(name -> name.startsWith("lease.acquire")).toList();
    }

    @Test
    void renewalsAreCountedByOutcome() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LeaseTemplate leases = context.getBean(LeaseTemplate.class);
            LeaseSpec quick = INVOICE.withTtl(java.time.Duration.ofMillis(600))
                    .withRenewEvery(java.time.Duration.ofMillis(100));
            try (Lease held = leases.acquire(quick)) {
                org.awaitility.Awaitility.await().atMost(dev.lease.testing.TestTiming.seconds(10)).until(() -> meters
                        .find("lease.renewals").tag("outcome", "ok").counters().stream()
                        .mapToDouble(counter -> counter.count()).sum() >= 2);
                assertThat(held.isValid()).isTrue();
            }
        });
    }

    @Test
    void withoutSpringBootsObservationSupportAcquiresAreStillTimed() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        LeaseAutoConfiguration.class, LeaseMetricsAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(ObservationRegistry.class);
                    context.getBean(LeaseTemplate.class).acquire(INVOICE).close();
                    assertThat(context.getBean(MeterRegistry.class).get("lease.acquire").tag("outcome", "acquired")
                            .timer().count()).isEqualTo(1);
                });
    }

    @Test
    void withoutMicrometerNothingChanges() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(LeaseMetrics.class);
                    context.getBean(LeaseTemplate.class).acquire(INVOICE).close();
                });
    }

    @Test
    void withMicrometerButNoMeterRegistryThereAreNoLeaseMeters() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                        LeaseMetricsAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LeaseMetrics.class));
    }

    @Test
    void aTracerMakesEachAcquireASpanWithTheEvaluatedNameAndToken() {
        SimpleTracer tracer = new SimpleTracer();
        runner.withUserConfiguration(Traced.class).withBean(SimpleTracer.class, () -> tracer).run(context -> {
            long token;
            try (Lease held = context.getBean(LeaseTemplate.class).acquire(INVOICE)) {
                token = held.token().value();
            }
            Deque<SimpleSpan> spans = tracer.getSpans();
            assertThat(spans).hasSize(1);
            SimpleSpan span = spans.getFirst();
            assertThat(span.getName()).isEqualTo("lease acquire");
            assertThat(span.getTags()).containsEntry("lease.name", "invoice-#{#id}")
                    .containsEntry("lease.evaluated-name", "invoice-42").containsEntry("lease.token", Long.toString(token))
                    .containsEntry("outcome", "acquired").containsEntry("lease.backend", "in-memory");
        });
    }

    @Test
    void anApplicationsConventionReplacesTheDefaultOne() {
        runner.withBean(LeaseAcquireObservationConvention.class, () -> new DefaultLeaseAcquireObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(LeaseAcquireContext context) {
                return super.getLowCardinalityKeyValues(context).and("team", "billing");
            }
        }).run(context -> {
            context.getBean(LeaseTemplate.class).acquire(INVOICE).close();
            assertThat(context.getBean(MeterRegistry.class).get("lease.acquire").tag("team", "billing")
                    .tag("lease.name", "invoice-#{#id}").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void staleWritesTheFenceRefusesAreCountedByTable() {
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        JdbcTemplateAutoConfiguration.class, JdbcFenceAutoConfiguration.class))
                .withBean(DataSource.class, () -> {
                    org.h2.jdbcx.JdbcDataSource h2 = new org.h2.jdbcx.JdbcDataSource();
                    h2.setURL("jdbc:h2:mem:fence-metrics;DB_CLOSE_DELAY=-1");
                    return h2;
                })
                .run(context -> {
                    JdbcFence fence = context.getBean(JdbcFence.class);
                    TransactionTemplate transactions = new TransactionTemplate(
                            new DataSourceTransactionManager(context.getBean(DataSource.class)));
                    transactions.executeWithoutResult(status -> fence.advance("invoice-42", token(7)));
                    assertThatThrownBy(() -> transactions.executeWithoutResult(
                            status -> fence.advance("invoice-42", token(6)))).isInstanceOf(StaleTokenException.class);
                    assertThat(context.getBean(MeterRegistry.class).get("lease.fence.rejected")
                            .tag("table", JdbcFence.TABLE).counter().count()).isEqualTo(1);
                });
    }

    private static FencingToken token(long value) {
        return new FencingToken("invoice-42", value);
    }

    @Configuration(proxyBeanMethods = false)
    static class Billing {

        @dev.lease.Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void bill(long id) {
        }
    }

    /** The application's own registry, as a tracing setup gives: meters and spans from the same observations. */
    @Configuration(proxyBeanMethods = false)
    static class Traced {

        @Bean
        ObservationRegistry observationRegistry(MeterRegistry meters, SimpleTracer tracer) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters))
                    .observationHandler(new DefaultTracingObservationHandler(tracer));
            return registry;
        }
    }
}
