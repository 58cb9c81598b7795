package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.lease.redis.RedisLeaseBackend;

/**
 * The Redis backend, on the application's {@link RedisConnectionFactory} ({@code spring.data.redis.*}), for
 * {@code EFFICIENCY} leases. {@code CORRECTNESS} leases routed to it are refused at startup.
 */
@AutoConfiguration(before = LeaseAutoConfiguration.class, after = DataRedisAutoConfiguration.class)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
@EnableConfigurationProperties(LeaseProperties.class)
public class RedisLeaseAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedisLeaseBackend redisLeaseBackend(RedisConnectionFactory redisConnectionFactory, LeaseProperties properties) {
        return new RedisLeaseBackend(redisConnectionFactory, properties.getRedis().getKeyPrefix());
    }
}
