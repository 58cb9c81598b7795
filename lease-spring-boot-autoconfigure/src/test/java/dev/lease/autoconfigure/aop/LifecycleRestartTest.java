package dev.lease.autoconfigure.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.Lifecycle;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import io.micrometer.core.instrument.MeterRegistry;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.autoconfigure.JdbcFenceAutoConfiguration;
import dev.lease.autoconfigure.LeaseActuatorAutoConfiguration;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.LeaseMetricsAutoConfiguration;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.aop.SpringLeaderElections;
import dev.lease.core.LeaseEngine;

/**
 * A context stopped and started again ({@link ConfigurableApplicationContext#stop()} then {@code start()}, as
 * checkpoint and restore do) works like a fresh start: every lifecycle bean of the library that lets go of something
 * on stop takes it up again on start. Today those are the elections bean and the one that releases leases held over
 * by holdAtLeast, and a guard below fails when the library gains another lifecycle bean, so that it gets the same test.
 */
class LifecycleRestartTest {

    /** The library's lifecycle beans that these tests cover; a new one must be added here with its own test. */
    private static final List<Class<?>> COVERED = List.of(SpringLeaderElections.class, heldOverLeases());

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @AfterEach
    void closeInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    /**
     * One instance: after each stop it does not lead and skips {@code @LeaderOnly} work; after each start it leads
     * again with a new term, runs the work, publishes the grant, and the {@link Leadership} and gauge taken before the
     * first stop follow it.
     */
    @Test
    void aSingleInstanceLeadsAgainAfterEachStopAndStart() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        LeaseAutoConfiguration.class, LeaseMetricsAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .withUserConfiguration(Reports.class, Events.class)
                .run(context -> {
                    Leadership held = context.getBean(LeaderElections.class).get("reports");
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    Reports reports = context.getBean(Reports.class);
                    Events events = context.getBean(Events.class);
                    await().atMost(seconds(10)).until(held::isLeader);
                    long token = reports.compute().orElseThrow().value();
                    for (int cycle = 1; cycle <= 3; cycle++) {
                        context.stop();
                        assertThat(held.isLeader()).as("cycle %d: stopped, not leader", cycle).isFalse();
                        assertThat(reports.compute()).as("cycle %d: stopped, work skipped", cycle).isEmpty();
                        assertThat(events.list).last().asString().startsWith("revoked reports");
                        context.start();
                        await("cycle " + cycle + ": leads again after start").atMost(seconds(10))
                                .until(held::isLeader);
                        long next = reports.compute().orElseThrow().value();
                        assertThat(next).as("cycle %d: a new term, with a higher token", cycle).isGreaterThan(token);
                        token = next;
                        assertThat(meters.get("lease.leader").tag("election", "reports").gauge().value())
                                .as("cycle %d: the gauge bound at startup follows the restarted election", cycle)
                                .isEqualTo(1.0);
                        assertThat(context.getBean(LeaderElections.class).get("reports")).isSameAs(held);
                    }
                    assertThat(events.list).filteredOn(event -> event.startsWith("granted")).hasSize(4);
                });
    }

    /**
     * A lease held over by holdAtLeast is released as the context stops (while the stores' clients still run), a
     * section that ends while stopped is not held over, and once started again leases are held over again.
     */
    @Test
    void heldOverLeasesAreReleasedOnStopAndHeldOverAgainAfterStart() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory").withBean(Held.class).run(context -> {
                    LeaseEngine engine = context.getBean(LeaseEngine.class);
                    Held held = context.getBean(Held.class);
                    for (int cycle = 1; cycle <= 2; cycle++) {
                        held.run();
                        assertThat(engine.held()).as("cycle %d: held over", cycle).hasSize(1);
                        context.stop();
                        assertThat(engine.held()).as("cycle %d: released on stop", cycle).isEmpty();
                        held.run();
                        assertThat(engine.held()).as("cycle %d: not held over while stopped", cycle).isEmpty();
                        context.start();
                    }
                });
    }

    static class Held {

        @Leased(name = "held-over", kind = LeaseKind.EFFICIENCY, holdAtLeast = "10m")
        public void run() {
        }
    }

    private static Class<?> heldOverLeases() {
        try {
            return Class.forName("dev.lease.autoconfigure.HeldOverLeases");
        }
        catch (ClassNotFoundException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Two instances: the stopped one hands over at once, and once started again it takes over when the other stops. */
    @Test
    void aRestartedInstanceCampaignsAgainAndTakesOverFromTheOther() {
        ConfigurableApplicationContext first = instance();
        await().atMost(seconds(10)).until(() -> leadership(first).isLeader());
        ConfigurableApplicationContext second = instance();
        long firstTerm = leadership(first).token().orElseThrow().value();

        first.stop();
        await("the stopped leader released at once").atMost(seconds(5)).until(() -> leadership(second).isLeader());
        long secondTerm = leadership(second).token().orElseThrow().value();
        assertThat(secondTerm).isGreaterThan(firstTerm);

        first.start();
        second.stop();
        await("the restarted instance campaigns again").atMost(seconds(5))
                .until(() -> leadership(first).isLeader());
        assertThat(leadership(first).token().orElseThrow().value()).isGreaterThan(secondTerm);
        assertThat(first.getBean(Reports.class).compute()).isEqualTo(leadership(first).token());
        assertThat(second.getBean(Reports.class).compute()).isEmpty();
    }

    /**
     * Every lifecycle bean the library registers with all its auto-configurations is in {@link #COVERED}: a new one
     * (a backend's watcher, a pool) must get a stop and start test like the one above before it is added there.
     */
    @Test
    void everyLifecycleBeanOfTheLibraryIsCoveredByAStopAndStartTest() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class,
                        LeaseMetricsAutoConfiguration.class, LeaseActuatorAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .withUserConfiguration(Reports.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Map<String, Lifecycle> lifecycles = context.getBeansOfType(Lifecycle.class);
                    List<Class<?>> library = lifecycles.values().stream().<Class<?>>map(Object::getClass)
                            .filter(type -> type.getName().startsWith("dev.lease.")).toList();
                    assertThat(library).as("lifecycle beans of the library").isNotEmpty()
                            .allSatisfy(type -> assertThat(COVERED).contains(type));
                });
    }

    private ConfigurableApplicationContext instance() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        TestPropertyValues.of("lease.backend=in-memory").applyTo(context);
        context.registerBean(InMemoryLeaseBackend.class, () -> store);
        context.register(Reports.class, Events.class, LeaseAutoConfiguration.class);
        context.refresh();
        instances.add(context);
        return context;
    }

    private static Leadership leadership(ConfigurableApplicationContext instance) {
        return instance.getBean(LeaderElections.class).get("reports");
    }

    @Configuration(proxyBeanMethods = false)
    static class Reports {

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public Optional<FencingToken> compute() {
            return Optional.of(LeaseContext.token());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Events {

        final List<String> list = new CopyOnWriteArrayList<>();

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            list.add("granted " + event.election());
        }

        @EventListener
        void revoked(LeadershipRevokedEvent event) {
            list.add("revoked " + event.election() + ": " + event.reason());
        }
    }
}
