package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

import dev.lease.LeaseKind;
import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.Credentials;
import dev.lease.redis.RedisLeaseBackend;

/**
 * The Redis backend, on the application's {@link RedisConnectionFactory} ({@code spring.data.redis.*}), for
 * {@code EFFICIENCY} leases. {@code CORRECTNESS} leases routed to it are refused at startup, and so is a Redis that
 * does not answer once leases are routed to it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnLeaseBackend(BackendType.REDIS)
@ConditionalOnBean(RedisConnectionFactory.class)
@EnableConfigurationProperties(RedisLeaseProperties.class)
class RedisLeaseConfiguration {

    private static final Log log = LogFactory.getLog(RedisLeaseConfiguration.class);

    private static final String CONNECTION_DETAILS =
            "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";


    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedisLeaseBackend redisLeaseBackend(RedisConnectionFactory redisConnectionFactory, RedisLeaseProperties redis,
            LeaseProperties properties, Environment environment) {
        RedisLeaseBackend backend = new RedisLeaseBackend(redisConnectionFactory, redis.getKeyPrefix());
        checkCommandTimeout(Binder.get(environment).bind("spring.data.redis.timeout", Duration.class).orElse(null),
                properties);
        return backend;
    }

    /** A PING when leases are routed to Redis; an application that only caches in Redis is not held up by it. */
    @Bean
    RoutedBackendCheck redisLeaseBackendReachable(ListableBeanFactory beans) {
        return router -> Stream.of(LeaseKind.values()).map(router::routeOf).flatMap(Optional::stream)
                .filter(RedisLeaseBackend.class::isInstance).map(RedisLeaseBackend.class::cast).distinct()
                .forEach(backend -> ping(backend, beans));
    }

    private static void ping(RedisLeaseBackend backend, ListableBeanFactory beans) {
        try {
            backend.ping();
        }
        catch (RuntimeException ex) {
            String address = ClassUtils.isPresent(CONNECTION_DETAILS, RedisLeaseConfiguration.class.getClassLoader())
                    ? ConnectionDetails.address(beans) : null;
            throw new LeaseConfigurationException("Leases are routed to Redis, but Redis "
                    + (address != null ? "at " + address + " (spring.data.redis.*)" : "(the RedisConnectionFactory)")
                    + " does not answer a PING: " + Credentials.redact(NestedExceptionUtils.getMostSpecificCause(ex).getMessage()) + ".",
                    "check that Redis is running and reachable, and fix spring.data.redis.* (host and port, or url; "
                            + "password, ssl); or route leases to another backend with lease.backend or "
                            + "lease.efficiency-backend.");
        }
    }

    /**
     * A command timeout longer than the renewal interval does not make a lease unsafe (its local validity still
     * runs out on time), but while Redis hangs, the release after a lost lease blocks the caller that long.
     */
    private static void checkCommandTimeout(@Nullable Duration timeout, LeaseProperties properties) {
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

    /** Where Spring Boot connects to, from its connection details; a class of its own as spring-boot-data-redis is optional. */
    private static final class ConnectionDetails {

        static @Nullable String address(ListableBeanFactory beans) {
            DataRedisConnectionDetails details = beans.getBeanProvider(DataRedisConnectionDetails.class).getIfUnique();
            if (details == null) {
                return null;
            }
            if (details.getCluster() != null) {
                return "cluster " + nodes(details.getCluster().getNodes());
            }
            if (details.getSentinel() != null) {
                return "master '" + details.getSentinel().getMaster() + "' of sentinels "
                        + nodes(details.getSentinel().getNodes());
            }
            if (details.getMasterReplica() != null) {
                return nodes(details.getMasterReplica().getNodes());
            }
            DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
            return standalone == null ? null : standalone.getHost() + ":" + standalone.getPort();
        }

        private static String nodes(List<DataRedisConnectionDetails.Node> nodes) {
            return nodes.stream().map(node -> node.host() + ":" + node.port()).collect(Collectors.joining(","));
        }
    }
}
