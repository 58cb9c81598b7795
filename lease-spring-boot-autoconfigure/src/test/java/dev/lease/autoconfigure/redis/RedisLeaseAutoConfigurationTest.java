package dev.lease.autoconfigure.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.core.BackendRouter;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.LeaseBackend;
import dev.lease.redis.RedisLeaseBackend;

/** The Redis backend wired from {@code spring.data.redis.*} next to the engine, on a real redis-server. */
@ExtendWith(OutputCaptureExtension.class)
class RedisLeaseAutoConfigurationTest {

    private static EmbeddedRedis redis;
    private static StringRedisTemplate admin;

    private ApplicationContextRunner runner;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        admin = redis.admin();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        LeaseAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.timeout=" + EmbeddedRedis.COMMAND_TIMEOUT.toMillis() + "ms");
    }

    @Test
    void efficiencyToRedisAndCorrectnessToAFencedBackendInOneApplication() {
        runner().withPropertyValues("lease.efficiency-backend=redis", "lease.correctness-backend=in-memory")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RedisLeaseBackend.class);
                    BackendRouter router = context.getBean(BackendRouter.class);
                    assertThat(router.backendFor(LeaseKind.EFFICIENCY).id()).isEqualTo("redis");
                    assertThat(router.backendFor(LeaseKind.CORRECTNESS).id()).isEqualTo("in-memory");
                    LeaseTemplate leases = context.getBean(LeaseTemplate.class);
                    String key = leases.execute(LeaseSpec.of("auto-efficiency", LeaseKind.EFFICIENCY),
                            lease -> admin.opsForValue().get("lease:auto-efficiency"));
                    assertThat(key).as("owner id stored under the default prefix").isNotBlank();
                    Long token = leases.execute(LeaseSpec.of("auto-correctness", LeaseKind.CORRECTNESS),
                            lease -> lease.token().value());
                    assertThat(token).isPositive();
                    assertThat(admin.hasKey("lease:auto-correctness")).as("CORRECTNESS lease in Redis").isFalse();
                });
    }

    @Test
    void anUnreachableRedisFailsTheStartupNamingItsAddressWhenLeasesAreRoutedToIt() throws Exception {
        int port = closedPort();
        for (String routing : new String[] {"lease.backend=redis", "lease.efficiency-backend=redis"}) {
            runner().withPropertyValues("spring.data.redis.port=" + port, routing, "lease.correctness-backend=in-memory")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause()
                                .isInstanceOf(LeaseConfigurationException.class)
                                .hasMessageContaining("127.0.0.1:" + port).hasMessageContaining("spring.data.redis.");
                    });
        }
    }

    /**
     * Redis for caching next to leases on another backend: whether Redis is up is none of the lease starter's
     * business, and it creates no Redis backend at all.
     */
    @Test
    void anUnreachableRedisDoesNotBlockAnApplicationThatRoutesLeasesElsewhere() throws Exception {
        runner().withPropertyValues("spring.data.redis.port=" + closedPort(), "lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedisLeaseBackend.class));
    }

    @Test
    void theKeyPrefixComesFromLeaseRedisKeyPrefix() {
        runner().withPropertyValues("lease.backend=redis", "lease.redis.key-prefix=orders:lease:").run(context -> {
            String owner = context.getBean(LeaseTemplate.class).execute(
                    LeaseSpec.of("prefixed", LeaseKind.EFFICIENCY), lease -> admin.opsForValue().get("orders:lease:prefixed"));
            assertThat(owner).isNotBlank();
        });
    }

    @Test
    void aRedisTimeoutLongerThanTheRenewalIntervalIsReported(CapturedOutput output) {
        runner().withPropertyValues("lease.backend=redis", "lease.default-ttl=30s", "spring.data.redis.timeout=10s")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("spring.data.redis.timeout 10s is not shorter than the lease renewal interval")
                .contains("below the renewal interval (10s)");
    }

    @Test
    void anInvalidKeyPrefixFailsTheStartup() {
        runner().withPropertyValues("lease.backend=redis", "lease.redis.key-prefix=my leases").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease.redis.key-prefix");
        });
    }

    @Test
    void aCorrectnessMethodOnRedisFailsTheStartupNamingTheMethodAndTheFix() {
        runner().withPropertyValues("lease.backend=redis").withBean(Billing.class).run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            while (!(failure instanceof LeaseConfigurationException) && failure.getCause() != null) {
                failure = failure.getCause();
            }
            assertThat(failure).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("@Leased on Billing.charge(long) (lease 'invoice-#{#id}')")
                    .hasMessageContaining("Redis issues no fencing token")
                    .hasMessageContaining("lease.correctness-backend: zookeeper");
        });
    }

    @Test
    void anEfficiencyMethodOnRedisStartsAndRuns() {
        runner().withPropertyValues("lease.backend=redis").withBean(Report.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Report.class).build()).isEqualTo("built");
        });
    }

    @Test
    void noRedisConnectionFactoryMeansNoRedisBackend() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedisLeaseBackend.class));
    }

    @Test
    void withoutSpringDataRedisTheBackendIsAbsentAndNamingItSaysHowToEnableIt() {
        // Without DataRedisAutoConfiguration, which itself needs spring-data-redis.
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
                .withPropertyValues("lease.backend=redis").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("lease.backend=redis names a backend that is not available")
                            .hasMessageContaining("spring-boot-starter-data-redis");
                });
    }

    @Test
    void anApplicationBackendBeanReplacesTheAutoConfiguredOne() {
        runner().withPropertyValues("lease.backend=redis")
                .withBean("customRedisLeases", RedisLeaseBackend.class,
                        () -> new RedisLeaseBackend(redis.connectionFactory(), "custom:"))
                .run(context -> {
                    assertThat(context).hasSingleBean(LeaseBackend.class);
                    assertThat(context.getBean(RedisLeaseBackend.class).key("x")).isEqualTo("custom:x");
                });
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    static class Billing {
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void charge(long id) {
        }
    }

    static class Report {
        @Leased(name = "nightly-report", kind = LeaseKind.EFFICIENCY)
        public String build() {
            return "built";
        }
    }
}
