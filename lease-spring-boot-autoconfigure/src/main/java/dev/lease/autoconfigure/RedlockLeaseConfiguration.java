package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.redis.RedlockLeaseBackend;

import io.lettuce.core.RedisURI;

/**
 * The Redlock backend, for {@code EFFICIENCY} leases across the independent Redis masters of
 * {@code lease.redlock.nodes}; created only when a {@code lease.*backend} property names {@code redlock}. An even
 * number of nodes, fewer than 3, or {@code CORRECTNESS} leases routed to it are refused at startup, and so is a
 * startup where fewer than a majority of the nodes answer once leases are routed to it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ LettuceConnectionFactory.class, RedisURI.class })
@ConditionalOnLeaseBackend(BackendType.REDLOCK)
@EnableConfigurationProperties(RedlockProperties.class)
class RedlockLeaseConfiguration {

    private static final Log log = LogFactory.getLog(RedlockLeaseConfiguration.class);

    /** How long the startup check waits for the nodes' PINGs. */
    private static final Duration STARTUP_PING = Duration.ofSeconds(5);

    /** The name Spring Boot gives its Redis health contributor (spring-boot-data-redis, 4.0 and 4.1). */
    private static final String BOOT_REDIS_HEALTH = "redisHealthContributor";

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedlockConnections redlockConnections(RedlockProperties properties,
            ObjectProvider<RedlockClientConfigurationCustomizer> customizers) {
        return RedlockConnections.open(properties, customizers.orderedStream().toList());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedlockLeaseBackend redlockLeaseBackend(RedlockConnections redlockConnections, RedlockProperties properties) {
        RedlockLeaseBackend backend;
        try {
            backend = new RedlockLeaseBackend(redlockConnections.factories(), properties.getKeyPrefix(),
                    properties.getClockDriftFactor(), properties.getNodeTimeout());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage(), "fix lease.redlock.* as the message says.");
        }
        log.info("Redlock over " + backend.nodeAddresses().size() + " nodes " + backend.nodeAddresses()
                + " (granted on a majority of " + (backend.nodeAddresses().size() / 2 + 1) + "), clock drift factor "
                + properties.getClockDriftFactor() + ": EFFICIENCY leases only, no fencing token (docs/redlock.md).");
        return backend;
    }

    /**
     * Boot's own {@code redis} health indicator (with spring-boot-starter-data-redis) checks the connection of
     * {@code spring.data.redis.*}, which Redlock does not use: left unconfigured it is localhost:6379, and
     * {@code /actuator/health} is DOWN while every Redlock node is up. Said once at startup rather than switched off:
     * the application may use that default Redis for something else, whose outage must not be hidden.
     */
    @Bean
    SmartInitializingSingleton redlockBootRedisHealthWarning(ConfigurableListableBeanFactory beanFactory,
            Environment environment) {
        return () -> {
            boolean connectionConfigured = Stream.of("url", "host", "port", "sentinel.master", "cluster.nodes")
                    .anyMatch(key -> environment.containsProperty("spring.data.redis." + key));
            if (beanFactory.containsBean(BOOT_REDIS_HEALTH) && !connectionConfigured
                    && beanFactory.getBeanNamesForType(RedisLeaseBackend.class, false, false).length == 0) {
                log.warn("Spring Boot's 'redis' health indicator checks spring.data.redis.*, which is not configured "
                        + "(so localhost:6379) and which the Redlock backend does not use (it uses lease.redlock.nodes):"
                        + " /actuator/health will be DOWN whenever that Redis is, whatever the Redlock nodes do. If "
                        + "Redis serves only Redlock here, set management.health.redis.enabled=false, or depend on "
                        + "spring-data-redis and lettuce-core instead of spring-boot-starter-data-redis "
                        + "(docs/redlock.md).");
            }
        };
    }

    /** Fewer than a majority answering a PING fails the startup when leases are routed to Redlock. */
    @Bean
    RoutedBackendCheck redlockLeaseBackendReachable() {
        return router -> Stream.of(LeaseKind.values()).map(router::routeOf).flatMap(Optional::stream)
                .filter(RedlockLeaseBackend.class::isInstance).map(RedlockLeaseBackend.class::cast).distinct()
                .forEach(RedlockLeaseConfiguration::majorityAnswers);
    }

    private static void majorityAnswers(RedlockLeaseBackend backend) {
        try {
            backend.checkHealth(STARTUP_PING);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while checking the Redlock nodes", ex);
        }
        catch (Exception ex) {
            throw new LeaseConfigurationException("Leases are routed to redlock, but " + ex.getMessage() + ".",
                    "check that the nodes of lease.redlock.nodes are running and reachable (host, port, password, "
                            + "tls); a majority must answer, the others may join later.");
        }
    }
}
