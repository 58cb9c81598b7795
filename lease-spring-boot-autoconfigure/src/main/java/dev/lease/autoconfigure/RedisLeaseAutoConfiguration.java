package dev.lease.autoconfigure;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.lease.core.Durations;
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

    private static final Log log = LogFactory.getLog(RedisLeaseAutoConfiguration.class);

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedisLeaseBackend redisLeaseBackend(RedisConnectionFactory redisConnectionFactory, LeaseProperties properties,
            Environment environment) {
        RedisLeaseBackend backend = new RedisLeaseBackend(redisConnectionFactory, properties.getRedis().getKeyPrefix());
        checkCommandTimeout(Binder.get(environment).bind("spring.data.redis.timeout", Duration.class).orElse(null),
                properties);
        return backend;
    }

    /**
     * A command timeout longer than the renewal interval does not make a lease unsafe (its local validity still
     * runs out on time), but while Redis hangs, the release after a lost lease blocks the caller that long.
     */
    private static void checkCommandTimeout(Duration timeout, LeaseProperties properties) {
        Duration renewEvery = properties.getRenewEvery() != null ? properties.getRenewEvery()
                : properties.getDefaultTtl().dividedBy(3);
        String advice = "; while Redis does not answer, a renewal or release can block that long. Set "
                + "spring.data.redis.timeout below the renewal interval (" + Durations.format(renewEvery) + "), e.g. 2s.";
        if (timeout == null) {
            log.info("spring.data.redis.timeout is not set (the Redis client's default applies, 60s for Lettuce)"
                    + advice);
        }
        else if (timeout.compareTo(renewEvery) >= 0) {
            log.warn("spring.data.redis.timeout " + Durations.format(timeout)
                    + " is not shorter than the lease renewal interval" + advice);
        }
    }
}
