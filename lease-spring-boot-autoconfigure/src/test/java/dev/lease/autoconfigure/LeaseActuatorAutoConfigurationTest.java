package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.jackson.EndpointJsonMapper;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.lease.Lease;
import dev.lease.LeaseCallback;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeasedWork;
import dev.lease.core.BackendRouter;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.EmbeddedRedis;

/**
 * The health contributor {@code lease} and the endpoint {@code leases}, with Actuator on the classpath and without,
 * on the in-memory backend and on real ZooKeeper and Redis servers.
 */
@ExtendWith(OutputCaptureExtension.class)
class LeaseActuatorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                    LeaseActuatorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                    JacksonEndpointAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=leases");

    @Test
    void theEndpointListsTheElectionsWithLeadershipAndTheTermsToken() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.leader.elections.reports.kind=CORRECTNESS",
                "lease.leader.elections.cleanup.kind=EFFICIENCY").run(context -> {
                    dev.lease.leader.Leadership reports = context.getBean(dev.lease.leader.LeaderElections.class)
                            .get("reports");
                    org.awaitility.Awaitility.await().atMost(seconds(10)).until(reports::isLeader);
                    List<LeasesEndpoint.ElectionDescriptor> elections = context.getBean(LeasesEndpoint.class)
                            .leases().elections();
                    assertThat(elections).extracting(LeasesEndpoint.ElectionDescriptor::election)
                            .containsExactly("cleanup", "reports");
                    LeasesEndpoint.ElectionDescriptor descriptor = elections.get(1);
                    assertThat(descriptor.kind()).isEqualTo(LeaseKind.CORRECTNESS);
                    assertThat(descriptor.leader()).isTrue();
                    assertThat(descriptor.token()).isEqualTo(reports.token().orElseThrow().value());
                });
    }

    @Test
    void withActuatorTheContributorIsNamedLeaseAndHasOneUpEntryPerBackend() {
        runner.withPropertyValues("lease.backend=in-memory").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LeasesEndpoint.class)
                    .hasBean("leaseHealthContributor");
            Health health = entry(context, InMemoryLeaseBackend.ID).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("kinds",
                    List.of(LeaseKind.CORRECTNESS, LeaseKind.EFFICIENCY));
            assertThat(contributor(context).stream()).as("entries").hasSize(1);
        });
    }

    @Test
    void aRealZooKeeperIsUpWithItsConnectionStateDownOnceStoppedAndUpAgainWhenBack() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            runner.withPropertyValues("lease.backend=zookeeper",
                    "lease.zookeeper.connect-string=" + server.getConnectString()).run(context -> {
                        assertThat(context).hasNotFailed();
                        HealthIndicator zookeeper = entry(context, "zookeeper");
                        Health up = zookeeper.health();
                        assertThat(up.getStatus()).isEqualTo(Status.UP);
                        assertThat(up.getDetails()).containsEntry("state", "CONNECTED")
                                .containsEntry("connectString", server.getConnectString())
                                .containsEntry("root", "/leases");

                        server.stop();

                        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                            Health down = zookeeper.health();
                            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                            assertThat((String) down.getDetails().get("error"))
                                    .contains("no lease can be granted or renewed");
                        });

                        server.restart();

                        await().atMost(seconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                                assertThat(zookeeper.health().getStatus()).isEqualTo(Status.UP));
                    });
        }
    }

    /** Redis for EFFICIENCY, in-memory for CORRECTNESS: two entries, and only the stopped one goes DOWN. */
    @Test
    void eachBackendInUseHasItsOwnEntryAndAStoppedRedisIsDownAlone() throws Exception {
        try (EmbeddedRedis redis = EmbeddedRedis.start()) {
            redisRunner(redis).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(contributor(context).stream()).extracting(e -> e.name())
                        .containsExactly(InMemoryLeaseBackend.ID, "redis");
                Health up = entry(context, "redis").health();
                assertThat(up.getStatus()).isEqualTo(Status.UP);
                assertThat(up.getDetails()).containsEntry("ping", "PONG")
                        .containsEntry("kinds", List.of(LeaseKind.EFFICIENCY));

                redis.stop();

                await().atMost(seconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                        assertThat(entry(context, "redis").health().getStatus()).isEqualTo(Status.DOWN));
                assertThat(entry(context, InMemoryLeaseBackend.ID).health().getStatus()).isEqualTo(Status.UP);
            });
        }
    }

    @Test
    void theEndpointShowsRoutingHeldLeasesWithTheirTokenAndThreadAndNoElectionsYet() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "billing-worker"));
        try (EmbeddedRedis redis = EmbeddedRedis.start()) {
            redisRunner(redis).run(context -> {
                LeaseTemplate leases = context.getBean(LeaseTemplate.class);
                BlockingWork work = new BlockingWork();
                AtomicLong tokenSeen = new AtomicLong();
                Future<String> section = pool.submit(() -> leases.execute(
                        LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS).withTtl(Duration.ofMinutes(5))
                                .withWaitFor(seconds(10)), lease -> {
                            tokenSeen.set(lease.token().value());
                            return work.doInLease(lease);
                        }));
                assertThat(work.awaitStarted(seconds(30))).isTrue();
                try (Lease unbound = leases.acquire(LeaseSpec.of("nightly-report", LeaseKind.EFFICIENCY)
                        .withTtl(Duration.ofMinutes(1)))) {

                    LeasesEndpoint.LeasesDescriptor body = context.getBean(LeasesEndpoint.class).leases();

                    assertThat(body.routing()).containsExactly(Map.entry("CORRECTNESS", InMemoryLeaseBackend.ID),
                            Map.entry("EFFICIENCY", "redis"));
                    assertThat(body.held()).extracting(LeasesEndpoint.HeldLeaseDescriptor::name)
                            .containsExactly("invoice-42", "nightly-report");
                    assertThat(body.held().get(0).token()).isEqualTo(tokenSeen.get());
                    assertThat(body.held().get(0).thread()).isEqualTo("billing-worker");
                    assertThat(body.held().get(0).remainingMillis()).isPositive().isLessThanOrEqualTo(300_000);
                    assertThat(body.held().get(1).token()).as("Redis issues no token").isNull();
                    assertThat(body.held().get(1).thread()).isNull();
                    assertThat(body.elections()).isEmpty();
                    assertThat(body.waiting()).as("nobody waits for a name").isEmpty();

                    // As Actuator writes it: its own mapper, which leaves nulls out unless told otherwise.
                    JsonMapper json = context.getBean(EndpointJsonMapper.class).get();
                    JsonNode tree = json.readTree(json.writeValueAsString(body));
                    assertThat(tree.propertyNames()).containsExactly("routing", "held", "waiting", "elections");
                    assertThat(tree.get("routing").get("EFFICIENCY").asString()).isEqualTo("redis");
                    JsonNode fenced = tree.get("held").get(0);
                    assertThat(fenced.propertyNames()).containsExactly("name", "kind", "backend", "token",
                            "remainingMillis", "thread");
                    assertThat(fenced.get("kind").asString()).isEqualTo("CORRECTNESS");
                    assertThat(fenced.get("token").asLong()).isEqualTo(tokenSeen.get());
                    assertThat(fenced.get("thread").asString()).isEqualTo("billing-worker");
                    JsonNode unfenced = tree.get("held").get(1);
                    assertThat(unfenced.has("token")).as("token absent, not null").isFalse();
                    assertThat(unfenced.has("thread")).as("thread written even when null").isTrue();
                    assertThat(unfenced.get("thread").isNull()).isTrue();
                    assertThat(tree.get("elections").isArray()).isTrue();
                    assertThat(tree.get("elections").isEmpty()).isTrue();
                    // The same annotations hold for a plain mapper (the application's own, should it write the body).
                    JsonNode plain = JsonMapper.builder().build().valueToTree(body).get("held").get(1);
                    assertThat(plain.has("token")).isFalse();
                    assertThat(plain.get("thread").isNull()).isTrue();
                }
                finally {
                    section.cancel(true);
                }
            });
        }
        finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anElectionWithoutATokenLeavesTheTokenOut() {
        runner.withPropertyValues("lease.backend=in-memory").run(context -> {
            JsonMapper json = context.getBean(EndpointJsonMapper.class).get();
            for (JsonMapper mapper : List.of(json, JsonMapper.builder().build())) {
                JsonNode election = mapper.valueToTree(new LeasesEndpoint.ElectionDescriptor("reports",
                        LeaseKind.EFFICIENCY, false, null));
                assertThat(election.propertyNames()).containsExactly("election", "kind", "leader");
            }
        });
    }

    /**
     * A check that hangs is DOWN within the bound, is not started a second time while it hangs, and is interrupted
     * when the context closes. The backend here is a test double on purpose: this tests the indicator, not a backend.
     */
    @Test
    void aBackendWhoseCheckHangsIsDownWithinTheTimeoutAndAskedOnlyOnce() {
        HangingCheckBackend hanging = new HangingCheckBackend();
        runner.withPropertyValues("lease.health.timeout=300ms")
                .withBean(BackendRouter.class, () -> BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, hanging)))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HealthIndicator entry = entry(context, "hanging");

                    long start = System.nanoTime();
                    Health first = entry.health();
                    Duration took = Duration.ofNanos(System.nanoTime() - start);

                    assertThat(first.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(first.getDetails()).containsEntry("error", "no answer within 300ms");
                    assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(seconds(2));
                    assertThat(entry.health().getStatus()).isEqualTo(Status.DOWN);
                    assertThat(hanging.calls).as("checks started while the first one hangs").hasValue(1);

                    hanging.answer.countDown();
                    await().atMost(seconds(10)).untilAsserted(() ->
                            assertThat(entry.health().getStatus()).isEqualTo(Status.UP));

                    hanging.answer = new CountDownLatch(1);
                    assertThat(entry.health().getStatus()).isEqualTo(Status.DOWN);
                });
        await().atMost(seconds(10)).untilTrue(hanging.interrupted);
    }

    @Test
    void aCheckThatFailsIsDownWithItsReason() {
        HangingCheckBackend failing = new HangingCheckBackend();
        failing.failure = new IllegalStateException("the store said no");
        runner.withBean(BackendRouter.class, () -> BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, failing)))
                .run(context -> {
                    Health health = entry(context, "hanging").health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails()).containsEntry("error",
                            "java.lang.IllegalStateException: the store said no")
                            .containsEntry("kinds", List.of(LeaseKind.EFFICIENCY));
                });
    }

    @Test
    void aTimeoutThatIsNotPositiveFailsTheStartup() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.health.timeout=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("lease.health.timeout");
        });
    }

    /** The property is in the metadata the unknown-key check reads, so a typo in it is caught like any other. */
    @Test
    void theTimeoutIsAKnownPropertyAndAMisspeltOneFailsTheStartup() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.health.timeout=5s").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LeaseHealthChecks.class).timeout()).isEqualTo(Duration.ofSeconds(5));
        });
        runner.withPropertyValues("lease.backend=in-memory", "lease.health.timout=5s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("'lease.health.timeout'");
        });
    }

    @Test
    void theHealthIndicatorCanBeTurnedOffAloneAndTheEndpointStays() {
        runner.withPropertyValues("lease.backend=in-memory", "management.health.lease.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean("leaseHealthContributor")
                    .doesNotHaveBean(LeaseHealthChecks.class).hasSingleBean(LeasesEndpoint.class);
            assertThat(context.getBean(HealthContributorRegistry.class).getContributor("lease")).isNull();
        });
    }

    @Test
    void anEndpointThatIsNotExposedIsNotCreated() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                        LeaseActuatorAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory").run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(LeasesEndpoint.class)
                            .hasBean("leaseHealthContributor");
                });
    }

    @Test
    void withoutActuatorNothingChanges() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health.",
                "org.springframework.boot.actuate."))
                .withPropertyValues("lease.backend=in-memory").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LeaseTemplate.class)
                            .doesNotHaveBean("leaseHealthContributor").doesNotHaveBean("leaseHealthChecks")
                            .doesNotHaveBean("leasesEndpoint");
                });
    }

    @Test
    void anApplicationTemplateWithoutAnEngineHasAnEmptyHeldListAndSaysWhy(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=in-memory")
                .withBean(LeaseTemplate.class, OwnTemplate::new).run(context -> {
                    assertThat(context).hasNotFailed();
                    LeasesEndpoint.LeasesDescriptor body = context.getBean(LeasesEndpoint.class).leases();
                    assertThat(body.routing()).containsEntry("CORRECTNESS", InMemoryLeaseBackend.ID);
                    assertThat(body.held()).isEmpty();
                    assertThat(output).contains("The leases endpoint will list no held leases");
                });
    }

    private ApplicationContextRunner redisRunner(EmbeddedRedis redis) {
        return runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.timeout=" + EmbeddedRedis.COMMAND_TIMEOUT.toMillis() + "ms",
                        "lease.efficiency-backend=redis", "lease.correctness-backend=in-memory");
    }

    private static CompositeHealthContributor contributor(AssertableApplicationContext context) {
        // Looked up by the name Actuator gives it, which proves the bean name is right.
        return (CompositeHealthContributor) context.getBean(HealthContributorRegistry.class).getContributor("lease");
    }

    private static HealthIndicator entry(AssertableApplicationContext context, String name) {
        return (HealthIndicator) contributor(context).getContributor(name);
    }

    /**
     * A backend whose health check blocks until told to answer, and remembers being interrupted; it never grants a
     * lease, which the health contributor must not ask for anyway.
     */
    static final class HangingCheckBackend implements LeaseBackend<Grant> {

        final AtomicInteger calls = new AtomicInteger();
        final AtomicBoolean interrupted = new AtomicBoolean();
        volatile CountDownLatch answer = new CountDownLatch(1);
        volatile RuntimeException failure;

        @Override
        public String id() {
            return "hanging";
        }

        @Override
        public BackendTraits traits() {
            return BackendTraits.fenced();
        }

        @Override
        public Map<String, Object> checkHealth(Duration timeout) throws Exception {
            calls.incrementAndGet();
            if (failure != null) {
                throw failure;
            }
            try {
                answer.await();
            }
            catch (InterruptedException ex) {
                interrupted.set(true);
                throw ex;
            }
            return Map.of("answered", true);
        }

        @Override
        public Optional<Grant> tryAcquire(GrantRequest request) {
            throw new AssertionError("a health check must not take a lease");
        }

        @Override
        public boolean renew(Grant grant) {
            throw new AssertionError("a health check must not renew a lease");
        }

        @Override
        public void release(Grant grant) {
            throw new AssertionError("a health check must not release a lease");
        }
    }

    /** An application's own template: the engine steps aside. */
    static final class OwnTemplate implements LeaseTemplate {

        @Override
        public Lease acquire(LeaseSpec spec) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<Lease> tryAcquire(LeaseSpec spec) {
            return Optional.empty();
        }

        @Override
        public <T> T execute(LeaseSpec spec, LeaseCallback<T> work) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <T> T run(LeaseSpec spec, LeasedWork<T> work, Supplier<T> whenBusy) {
            throw new UnsupportedOperationException();
        }
    }
}
