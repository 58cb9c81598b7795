package dev.lease.autoconfigure.leader;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.leader.LeaderElections;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.testing.EmbeddedRedis;

/** An EFFICIENCY election on a real Redis: one leader, no token, handed over at once when the leader stops. */
class RedisLeaderElectionTest {

    private static EmbeddedRedis redis;
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    @AfterEach
    void stopInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void oneLeaderWithoutATokenAndAnImmediateHandover() {
        List<ConfigurableApplicationContext> two = List.of(instance(), instance());
        ConfigurableApplicationContext leader = await().atMost(seconds(10)).until(() -> leaderOf(two), it -> it != null);
        assertThat(leadership(leader).token()).as("Redis issues no token").isEmpty();
        for (ConfigurableApplicationContext instance : two) {
            assertThat(instance.getBean(Cleanup.class).run()).isEqualTo(instance == leader ? "ran without a token" : null);
        }
        leader.close();
        List<ConfigurableApplicationContext> rest = two.stream().filter(it -> it != leader).toList();
        // The ttl is 30s: a handover within 10s came from the release, not from expiry.
        await().atMost(seconds(10)).until(() -> leaderOf(rest) != null);
    }

    private ConfigurableApplicationContext instance() {
        LettuceConnectionFactory connections = redis.connectionFactory();
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        TestPropertyValues.of("lease.backend=redis", "lease.default-ttl=30s").applyTo(context);
        context.registerBean(RedisConnectionFactory.class, () -> connections);
        context.register(Cleanup.class, LeaseAutoConfiguration.class);
        context.refresh();
        instances.add(context);
        return context;
    }

    private static Leadership leadership(ConfigurableApplicationContext instance) {
        return instance.getBean(LeaderElections.class).get("cache-cleanup");
    }

    private static ConfigurableApplicationContext leaderOf(List<ConfigurableApplicationContext> instances) {
        List<ConfigurableApplicationContext> leaders = instances.stream()
                .filter(instance -> instance.isActive() && leadership(instance).isLeader()).toList();
        assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
        return leaders.isEmpty() ? null : leaders.get(0);
    }

    @Configuration(proxyBeanMethods = false)
    static class Cleanup {

        @LeaderOnly(election = "cache-cleanup", kind = LeaseKind.EFFICIENCY)
        public String run() {
            return LeaseContext.current().hasToken() ? "ran with a token" : "ran without a token";
        }
    }
}
