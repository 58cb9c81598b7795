package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class OnLeaseBackendConditionTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(RedisLike.class, InMemoryLike.class);

    @Test
    void withoutAnyBackendPropertyEveryBackendButTheInMemoryOneMayBeCreated() {
        runner.run(context -> assertThat(context).hasBean("redisLike").doesNotHaveBean("inMemoryLike"));
    }

    @Test
    void aBackendNamedByAnyOfTheThreePropertiesIsCreated() {
        runner.withPropertyValues("lease.correctness-backend=in-memory", "lease.efficiency-backend= Redis ")
                .run(context -> assertThat(context).hasBean("redisLike").hasBean("inMemoryLike"));
    }

    @Test
    void backendsThePropertiesDoNotNameStayAway() {
        runner.withPropertyValues("lease.backend=zookeeper")
                .run(context -> assertThat(context).doesNotHaveBean("redisLike").doesNotHaveBean("inMemoryLike"));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnLeaseBackend(BackendType.REDIS)
    static class RedisLike {

        @Bean
        String redisLike() {
            return "redis";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnLeaseBackend(BackendType.IN_MEMORY)
    static class InMemoryLike {

        @Bean
        String inMemoryLike() {
            return "in-memory";
        }
    }
}
