package dev.lease.autoconfigure.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.UnfencedBackend;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.memory.InMemoryLeaseBackend;

/** {@code @LeaderOnly}, the LeaderElections bean and the leadership events, on instances sharing one in-memory store. */
class LeaderOnlyTest {

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory")
            .withBean(InMemoryLeaseBackend.class, () -> store);

    @AfterEach
    void closeInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void exactlyOneInstanceLeadsAndRunsTheLeaderOnlyMethodWithTheTermsToken() {
        List<ConfigurableApplicationContext> three = List.of(instance(), instance(), instance());
        ConfigurableApplicationContext leader = awaitOneLeader(three);
        for (ConfigurableApplicationContext instance : three) {
            Reports reports = instance.getBean(Reports.class);
            Optional<FencingToken> ran = reports.compute();
            if (instance == leader) {
                assertThat(ran).isEqualTo(leadership(leader).token());
            }
            else {
                assertThat(ran).as("not leader: skipped").isEmpty();
            }
            assertThat(reports.noResult()).isEqualTo(instance == leader ? "done" : null);
        }
        Events events = leader.getBean(Events.class);
        assertThat(events.list).containsExactly("granted reports " + leadership(leader).token().orElseThrow().value());
        assertThat(leader.getBean(LeaderElections.class).all()).extracting(Leadership::election)
                .containsExactly("reports");
    }

    @Test
    void closingTheLeadersContextHandsOverAtOnceWithAHigherToken() {
        List<ConfigurableApplicationContext> three = List.of(instance(), instance(), instance());
        ConfigurableApplicationContext leader = awaitOneLeader(three);
        long first = leadership(leader).token().orElseThrow().value();
        Events events = leader.getBean(Events.class);
        leader.close();
        assertThat(events.list).last().asString().startsWith("revoked reports: the application is shutting down");
        List<ConfigurableApplicationContext> rest = three.stream().filter(instance -> instance != leader).toList();
        ConfigurableApplicationContext next = await().atMost(seconds(5)).until(() -> leaderOf(rest), it -> it != null);
        assertThat(leadership(next).token().orElseThrow().value()).isGreaterThan(first);
    }

    @Test
    void yieldingLeadershipRevokesItAndPublishesTheEvent() {
        List<ConfigurableApplicationContext> two = List.of(instance(), instance());
        ConfigurableApplicationContext leader = awaitOneLeader(two);
        long first = leadership(leader).token().orElseThrow().value();
        leadership(leader).yieldLeadership();
        ConfigurableApplicationContext other = two.get(0) == leader ? two.get(1) : two.get(0);
        await().atMost(seconds(5)).until(() -> leadership(other).isLeader());
        assertThat(leadership(other).token().orElseThrow().value()).isGreaterThan(first);
        assertThat(leader.getBean(Events.class).list).anyMatch(event -> event.startsWith("revoked reports")
                && event.contains("yielded"));
        assertThat(leader.getBean(Reports.class).compute()).isEmpty();
    }

    @Test
    void anElectionDeclaredByPropertiesAloneNeedsAKind() {
        runner.withPropertyValues("lease.leader.elections.cleanup.ttl=10s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("lease.leader.elections.cleanup")
                    .hasMessageContaining("without a kind");
        });
        runner.withPropertyValues("lease.leader.elections.cleanup.kind=EFFICIENCY").run(context -> {
            assertThat(context).hasNotFailed();
            await().atMost(seconds(5)).until(() -> context.getBean(LeaderElections.class).get("cleanup").isLeader());
        });
    }

    @Test
    void twoKindsForOneElectionFailTheStartup() {
        runner.withUserConfiguration(Reports.class, Conflicting.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("Election 'reports' is declared CORRECTNESS")
                    .hasMessageContaining("EFFICIENCY");
        });
    }

    @Test
    void aPrimitiveReturnTypeAnInvalidNameAndAnUnfencedCorrectnessRouteFailTheStartup() {
        runner.withUserConfiguration(Primitive.class).run(context -> assertThat(rootCause(context.getStartupFailure()))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("count()")
                .hasMessageContaining("cannot express \"skipped\""));
        runner.withUserConfiguration(BadName.class).run(context -> assertThat(rootCause(context.getStartupFailure()))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("election '../x' is refused"));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withBean(UnfencedBackend.class, UnfencedBackend::new)
                .withPropertyValues("lease.backend=unfenced")
                .withUserConfiguration(Reports.class)
                .run(context -> assertThat(rootCause(context.getStartupFailure()))
                        .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("reports"));
    }

    @Test
    void anAsyncOrUnproxyableLeaderOnlyMethodFailsTheStartup() {
        runner.withUserConfiguration(AsyncLeader.class).run(context -> assertThat(rootCause(context.getStartupFailure()))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("@LeaderOnly on AsyncLeader.run()")
                .hasMessageContaining("@Async"));
        runner.withUserConfiguration(FinalLeader.class).run(context -> assertThat(rootCause(context.getStartupFailure()))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("final"));
    }

    @Test
    void anUnknownElectionIsNamedWithTheKnownOnes() {
        ConfigurableApplicationContext instance = instance();
        assertThatThrownBy(() -> instance.getBean(LeaderElections.class).get("nope"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reports");
    }

    /** One application instance, kept running until the test ends (a runner's context ends with its callback). */
    private ConfigurableApplicationContext instance() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        TestPropertyValues.of("lease.backend=in-memory").applyTo(context);
        context.registerBean(InMemoryLeaseBackend.class, () -> store);
        context.register(Reports.class, Events.class, LeaseAutoConfiguration.class);
        context.refresh();
        instances.add(context);
        return context;
    }

    private static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (!(cause instanceof LeaseConfigurationException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    private static Leadership leadership(ConfigurableApplicationContext instance) {
        return instance.getBean(LeaderElections.class).get("reports");
    }

    private static ConfigurableApplicationContext awaitOneLeader(List<ConfigurableApplicationContext> instances) {
        return await().atMost(seconds(10)).until(() -> leaderOf(instances), it -> it != null);
    }

    private static ConfigurableApplicationContext leaderOf(List<ConfigurableApplicationContext> instances) {
        List<ConfigurableApplicationContext> leaders = instances.stream()
                .filter(instance -> instance.isActive() && leadership(instance).isLeader()).toList();
        assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
        return leaders.isEmpty() ? null : leaders.get(0);
    }

    @Configuration(proxyBeanMethods = false)
    static class Reports {

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public Optional<FencingToken> compute() {
            return Optional.of(LeaseContext.token());
        }

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public String noResult() {
            return "done";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Conflicting {

        @LeaderOnly(election = "reports", kind = LeaseKind.EFFICIENCY)
        public void cleanUp() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Primitive {

        @LeaderOnly(election = "counts", kind = LeaseKind.EFFICIENCY)
        public int count() {
            return 1;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadName {

        @LeaderOnly(election = "../x", kind = LeaseKind.EFFICIENCY)
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AsyncLeader {

        @org.springframework.scheduling.annotation.Async
        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FinalLeader {

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public final void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Events {

        final List<String> list = new CopyOnWriteArrayList<>();

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            list.add("granted " + event.election() + " " + event.token().map(FencingToken::value).orElse(-1L));
        }

        @EventListener
        void revoked(LeadershipRevokedEvent event) {
            list.add("revoked " + event.election() + ": " + event.reason());
        }
    }
}
