package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.core.BackendRouter;
import dev.lease.etcd.EtcdLeaseBackend;
import dev.lease.etcd.EtcdTesting;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;
import dev.lease.testing.EtcdServer;

/** The etcd backend as Spring Boot configures it, on a real one-member etcd. */
class EtcdLeaseAutoConfigurationTest {

    private static EtcdServer etcd;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class, LeaseActuatorAutoConfiguration.class,
                    HealthContributorRegistryAutoConfiguration.class));

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdServer.start(1);
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void endpointsAreAllItTakesAndCorrectnessLeasesGetRisingTokens() {
        runner.withPropertyValues("lease.etcd.endpoints=" + etcd.endpoints()).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(EtcdLeaseBackend.class).hasSingleBean(Client.class);
            assertThat(context.getBean(BackendRouter.class).routeOf(LeaseKind.CORRECTNESS))
                    .containsInstanceOf(EtcdLeaseBackend.class);
            LeaseTemplate template = context.getBean(LeaseTemplate.class);
            LeaseSpec spec = LeaseSpec.of("auto-etcd", LeaseKind.CORRECTNESS).withTtl(seconds(5))
                    // A first grant on a loaded machine may outlast the 1 s a request without a wait gets; retried.
                    .withWaitFor(seconds(30));
            long first = template.execute(spec, lease -> lease.token().value());
            long second = template.execute(spec, lease -> lease.token().value());
            assertThat(second).isGreaterThan(first);
            assertThat(context.getBean(EtcdLeaseBackend.class).keyOf("x")).as("default prefix").isEqualTo("/leases/x");
        });
    }

    @Test
    void anApplicationsClientIsReusedAndTheCustomizerIsNotAskedForIt() {
        runner.withUserConfiguration(OwnClient.class).withPropertyValues("lease.backend=etcd",
                "lease.etcd.key-prefix=/own/").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Client.class);
                    assertThat(context.getBean(Client.class)).isSameAs(context.getBean(OwnClient.class).client);
                    assertThat(context.getBean(OwnClient.class).customized).hasValue(0);
                    long token = context.getBean(LeaseTemplate.class).execute(
                            LeaseSpec.of("own", LeaseKind.CORRECTNESS).withTtl(seconds(5)).withWaitFor(seconds(30)),
                            lease -> lease.token().value());
                    assertThat(token).isPositive();
                });
    }

    @Test
    void customizersShapeTheClientBuiltFromTheEndpoints() {
        runner.withUserConfiguration(Customizing.class).withPropertyValues("lease.etcd.endpoints=" + etcd.endpoints())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Customizing.class).calls).hasValue(1);
                });
    }

    /**
     * A paused member keeps its TCP connection open: only a gRPC keep-alive ping tells it is gone. Customizers see the
     * starter's settings (and may change them): a ping after 10 s of silence (etcd refuses pings more often than its
     * --grpc-keepalive-min-time, 5 s, and gRPC Java sends none sooner than 10 s), given up after 3 s, and none while
     * no call is out (etcd closes a connection that pings without streams).
     */
    @Test
    void theClientNoticesASilentMemberWithinSeconds() {
        runner.withUserConfiguration(Customizing.class).withPropertyValues("lease.etcd.endpoints=" + etcd.endpoints())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    ClientBuilder seen = context.getBean(Customizing.class).seen.get();
                    assertThat(seen.keepaliveTime()).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(10));
                    assertThat(seen.keepaliveTimeout()).isLessThanOrEqualTo(Duration.ofSeconds(5));
                    assertThat(seen.keepaliveWithoutCalls()).isFalse();
                });
    }

    @Test
    void everyEndpointRefusingFailsTheStartupWithAShortMessage() throws IOException {
        int closed = closedPort();
        runner.withPropertyValues("lease.etcd.endpoints=http://127.0.0.1:" + closed).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("Could not connect to etcd at 'http://127.0.0.1:" + closed + "'")
                    .hasMessageContaining("every endpoint refused the connection")
                    .hasMessageContaining("lease.etcd.endpoints");
        });
    }

    @Test
    void anUnresolvableHostFailsTheStartupNamingTheHostAndTheFix() {
        runner.withPropertyValues("lease.etcd.endpoints=http://etcd-lease-test.invalid:2379").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("the host 'etcd-lease-test.invalid' does not resolve to any address")
                    .hasMessageNotContaining("refused")
                    .hasMessageContaining("correct the host name in lease.etcd.endpoints");
        });
    }

    @Test
    void anEndpointThatIsNoUrlIsNamed() {
        runner.withPropertyValues("lease.etcd.endpoints=127.0.0.1:2379").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("'127.0.0.1:2379', which is not an etcd client URL");
        });
    }

    @Test
    void healthIsUpWithALeaderAndDownWhileTheMemberIsPaused() {
        runner.withPropertyValues("lease.etcd.endpoints=" + etcd.endpoints(), "lease.health.timeout=1s").run(context -> {
            assertThat(context).hasNotFailed();
            HealthIndicator health = (HealthIndicator) context.getBean("leaseHealthContributor",
                    CompositeHealthContributor.class).getContributor(EtcdLeaseBackend.ID);
            Health up = health.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("leader", "known").containsKey("raftTerm");
            etcd.pause(0);
            try {
                await().atMost(seconds(30)).until(() -> health.health().getStatus().equals(Status.DOWN));
            }
            finally {
                etcd.resume(0);
            }
            await().atMost(seconds(30)).until(() -> health.health().getStatus().equals(Status.UP));
        });
    }

    /** Elections work on etcd through the engine like any lease: a term is a fenced etcd lease. */
    @Test
    void anElectionOnEtcdHasALeaderWithAToken() {
        runner.withPropertyValues("lease.etcd.endpoints=" + etcd.endpoints(),
                "lease.leader.elections.reports.kind=CORRECTNESS", "lease.leader.elections.reports.ttl=5s")
                .run(context -> {
                    Leadership reports = context.getBean(LeaderElections.class).get("reports");
                    await().atMost(seconds(30)).until(reports::isLeader);
                    assertThat(reports.token()).isPresent();
                    long term = reports.token().orElseThrow().value();
                    reports.yieldLeadership();
                    await().atMost(seconds(60)).until(() -> reports.isLeader()
                            && reports.token().orElseThrow().value() > term);
                });
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {

        final Client client = EtcdTesting.client(etcd.endpoints());
        final AtomicInteger customized = new AtomicInteger();

        @Bean(destroyMethod = "close")
        Client ownEtcdClient() {
            return client;
        }

        @Bean
        EtcdClientBuilderCustomizer countingCustomizer() {
            return builder -> customized.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizing {

        final AtomicInteger calls = new AtomicInteger();
        final AtomicReference<ClientBuilder> seen = new AtomicReference<>();

        @Bean
        EtcdClientBuilderCustomizer shortTimeouts() {
            return builder -> {
                calls.incrementAndGet();
                seen.set(builder);
                builder.connectTimeout(Duration.ofSeconds(2));
            };
        }
    }
}
