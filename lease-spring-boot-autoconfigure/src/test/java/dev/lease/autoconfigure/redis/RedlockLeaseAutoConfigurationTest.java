package dev.lease.autoconfigure.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

import dev.lease.redis.RedlockLeaseBackend;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.autoconfigure.LeaseActuatorAutoConfiguration;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.core.BackendRouter;
import dev.lease.testing.EmbeddedRedis;

/** The Redlock backend wired from {@code lease.redlock.*} on three real redis-servers, and its startup refusals. */
@ExtendWith(OutputCaptureExtension.class)
class RedlockLeaseAutoConfigurationTest {

    private static final List<EmbeddedRedis> servers = new ArrayList<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class, LeaseActuatorAutoConfiguration.class,
                    HealthContributorRegistryAutoConfiguration.class));

    @BeforeAll
    static void startNodes() throws Exception {
        for (int i = 0; i < 3; i++) {
            servers.add(EmbeddedRedis.start());
        }
    }

    @AfterAll
    static void stopNodes() throws Exception {
        for (EmbeddedRedis server : servers) {
            server.close();
        }
    }

    private static String nodes(List<EmbeddedRedis> of) {
        return of.stream().map(s -> "redis://127.0.0.1:" + s.port()).collect(Collectors.joining(", "));
    }

    @Test
    void efficiencyLeasesOnEveryNodeCorrectnessElsewhereAndTheHealthUpWhileAMajorityAnswers(CapturedOutput output)
            throws Exception {
        runner.withPropertyValues("lease.efficiency-backend=redlock", "lease.correctness-backend=in-memory",
                "lease.redlock.nodes=" + nodes(servers)).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RedlockLeaseBackend.class);
                    BackendRouter router = context.getBean(BackendRouter.class);
                    assertThat(router.backendFor(LeaseKind.EFFICIENCY).id()).isEqualTo("redlock");
                    long holding = context.getBean(LeaseTemplate.class).execute(
                            LeaseSpec.of("auto-redlock", LeaseKind.EFFICIENCY),
                            lease -> servers.stream().filter(s -> s.admin().hasKey("lease:auto-redlock")).count());
                    assertThat(holding).as("nodes holding the key").isEqualTo(3);
                    assertThat(output).contains("EFFICIENCY -> redlock").contains("Redlock over 3 nodes");

                    Health up = redlockHealth(context).health();
                    assertThat(up.getStatus()).isEqualTo(Status.UP);
                    servers.get(0).stop();
                    try {
                        // A majority still answers; on a loaded machine one of its PINGs may time out now and then.
                        org.awaitility.Awaitility.await("one node of three down: still UP").atMost(seconds(30))
                                .until(() -> redlockHealth(context).health().getStatus().equals(Status.UP));
                        servers.get(1).stop();
                        assertThat(redlockHealth(context).health().getStatus()).as("two nodes of three down")
                                .isEqualTo(Status.DOWN);
                    }
                    finally {
                        for (EmbeddedRedis server : servers) {
                            if (!server.isRunning()) {
                                server.restart();
                            }
                        }
                    }
                    org.awaitility.Awaitility.await().atMost(seconds(60))
                            .until(() -> redlockHealth(context).health().getStatus().equals(Status.UP));
                });
    }

    /** Issue 44: CORRECTNESS leases are refused on Redlock, so its health does not list them among its kinds. */
    @Test
    void theHealthOfRedlockAsTheOnlyBackendListsOnlyEfficiency() {
        runner.withPropertyValues("lease.backend=redlock", "lease.redlock.nodes=" + nodes(servers)).run(context ->
                assertThat(redlockHealth(context).health().getDetails()).containsEntry("kinds",
                        List.of(LeaseKind.EFFICIENCY)));
    }

    @Test
    void correctnessRoutedToRedlockFailsTheStartupNamingTheReasonAndTheFix() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.correctness-backend=redlock",
                "lease.redlock.nodes=" + nodes(servers)).run(context -> {
                    LeaseConfigurationException failure = failure(context);
                    assertThat(failure.getMessage()).contains("no fencing token").contains("Kleppmann")
                            .contains("clock").contains("lease.correctness-backend: zookeeper");
                });
    }

    @Test
    void aCorrectnessLeaseOnAnApplicationWhoseOnlyBackendIsRedlockFailsTheStartup() {
        runner.withPropertyValues("lease.backend=redlock", "lease.redlock.nodes=" + nodes(servers))
                .withUserConfiguration(Billing.class).run(context -> {
                    LeaseConfigurationException failure = failure(context);
                    assertThat(failure.getMessage()).contains("invoice").contains("Kleppmann");
                });
    }

    @Test
    void anEvenNumberOfNodesFailsTheStartupNamingThePropertyWithoutPrintingPasswords(CapturedOutput output) {
        runner.withPropertyValues("lease.efficiency-backend=redlock", "lease.correctness-backend=in-memory",
                "lease.redlock.nodes=redis://:s3cret@127.0.0.1:" + servers.get(0).port() + ", redis://:s3cret@127.0.0.1:"
                        + servers.get(1).port()).run(context -> {
                            LeaseConfigurationException failure = failure(context);
                            assertThat(failure.getMessage()).contains("lease.redlock.nodes lists 2 nodes")
                                    .contains("odd").doesNotContain("s3cret");
                        });
        assertThat(output).doesNotContain("s3cret");
    }

    @Test
    void fewerThanThreeNodesOrAMalformedUriFailTheStartup(CapturedOutput output) {
        runner.withPropertyValues("lease.efficiency-backend=redlock", "lease.correctness-backend=in-memory",
                "lease.redlock.nodes=redis://127.0.0.1:" + servers.get(0).port()).run(context -> assertThat(
                        failure(context).getMessage()).contains("lease.redlock.nodes lists 1 node").contains("at least 3"));
        runner.withPropertyValues("lease.efficiency-backend=redlock", "lease.correctness-backend=in-memory",
                "lease.redlock.nodes=redis://127.0.0.1:1, http://user:hunter2@127.0.0.1:2, redis://127.0.0.1:3")
                .run(context -> assertThat(failure(context).getMessage()).contains("entry 2")
                        .contains("http://***@").doesNotContain("hunter2"));
        assertThat(output).doesNotContain("hunter2");
    }

    @Test
    void aMajorityOfNodesUnreachableFailsTheStartup() {
        runner.withPropertyValues("lease.efficiency-backend=redlock", "lease.correctness-backend=in-memory",
                "lease.redlock.connect-timeout=500ms",
                "lease.redlock.nodes=redis://127.0.0.1:" + servers.get(0).port() + ", redis://127.0.0.1:1, "
                        + "redis://127.0.0.1:2").run(context -> assertThat(failure(context).getMessage())
                                .contains("fewer than a majority").contains("127.0.0.1:1"));
    }

    private static LeaseConfigurationException failure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        Throwable root = context.getStartupFailure();
        while (root != null && !(root instanceof LeaseConfigurationException)) {
            root = root.getCause();
        }
        assertThat(root).as("a LeaseConfigurationException in " + NestedExceptionUtils.getMostSpecificCause(
                context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class);
        return (LeaseConfigurationException) root;
    }

    private static HealthIndicator redlockHealth(AssertableApplicationContext context) {
        CompositeHealthContributor lease = (CompositeHealthContributor) context.getBean(HealthContributorRegistry.class)
                .getContributor("lease");
        return (HealthIndicator) lease.getContributor("redlock");
    }

    @Configuration(proxyBeanMethods = false)
    static class Billing {

        @Bean
        Invoices invoices() {
            return new Invoices();
        }
    }

    static class Invoices {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void bill(long id) {
        }
    }
}
