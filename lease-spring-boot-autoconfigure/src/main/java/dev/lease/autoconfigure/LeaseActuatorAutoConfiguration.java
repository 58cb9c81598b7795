package dev.lease.autoconfigure;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeaderElections;
import dev.lease.spi.LeaseBackend;

/**
 * Actuator integration, for applications that have Actuator; nothing here applies, and nothing fails, without it.
 * <ul>
 *   <li>the health contributor {@code lease}: one entry per backend in use, named by its id, each UP or DOWN from the
 *       backend's own check (ZooKeeper connection state, Redis PING, JDBC lease table read), never taking a lease and
 *       never waiting longer than {@code lease.health.timeout}; off with {@code management.health.lease.enabled=false},
 *       replaced by a bean named {@code leaseHealthContributor};</li>
 *   <li>the endpoint {@code leases} ({@link LeasesEndpoint}), exposed like any other endpoint
 *       ({@code management.endpoints.web.exposure.include=leases}).</li>
 * </ul>
 */
@AutoConfiguration(after = LeaseAutoConfiguration.class)
@ConditionalOnBean(BackendRouter.class)
public class LeaseActuatorAutoConfiguration {

    private static final Log log = LogFactory.getLog(LeaseActuatorAutoConfiguration.class);

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public LeaseActuatorAutoConfiguration() {
    }

    /**
     * The health beans. Their conditions other than the classpath sit on the methods: Spring instantiates every
     * condition of a class before evaluating any, so a condition class from spring-boot-health on this class would
     * fail an application without it instead of skipping the class.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
    @EnableConfigurationProperties(LeaseHealthProperties.class)
    static class HealthConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnEnabledHealthIndicator("lease")
        LeaseHealthChecks leaseHealthChecks(LeaseHealthProperties health) {
            return new LeaseHealthChecks(health.getTimeout());
        }

        /** Named so that Actuator, which drops the "HealthContributor" suffix, calls the contributor {@code lease}. */
        @Bean
        @ConditionalOnEnabledHealthIndicator("lease")
        @ConditionalOnMissingBean(name = "leaseHealthContributor")
        CompositeHealthContributor leaseHealthContributor(BackendRouter router, LeaseHealthChecks leaseHealthChecks) {
            Map<LeaseBackend<?>, List<LeaseKind>> kindsByBackend = new IdentityHashMap<>();
            List<LeaseBackend<?>> inUse = new ArrayList<>();
            for (LeaseKind kind : LeaseKind.values()) {
                // A backend without tokens serves no CORRECTNESS lease (they are refused), even when routed it.
                router.routeOf(kind).filter(backend -> kind != LeaseKind.CORRECTNESS
                        || backend.traits().issuesFencingTokens()).ifPresent(backend -> kindsByBackend.computeIfAbsent(backend, b -> {
                    inUse.add(b);
                    return new ArrayList<>();
                }).add(kind));
            }
            Map<String, HealthIndicator> entries = new LinkedHashMap<>();
            for (LeaseBackend<?> backend : inUse) {
                List<LeaseKind> kinds = kindsByBackend.get(backend);
                // Two backends of one type (a router of the application's own) would clash on the id alone.
                boolean sharedId = inUse.stream().filter(other -> other.id().equals(backend.id())).count() > 1;
                String name = sharedId ? backend.id() + "-" + kinds.get(0).name().toLowerCase(Locale.ROOT) : backend.id();
                entries.put(name, new BackendHealthIndicator(backend, kinds, leaseHealthChecks));
            }
            return CompositeHealthContributor.fromMap(entries);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint
        LeasesEndpoint leasesEndpoint(BackendRouter router, ObjectProvider<LeaseEngine> engine,
                ObjectProvider<LeaderElections> elections) {
            LeaseEngine leaseEngine = engine.getIfUnique();
            if (leaseEngine == null) {
                log.info("The leases endpoint will list no held leases: the application's own LeaseTemplate replaced "
                        + "the lease engine, and there is no single LeaseEngine bean to read them from.");
            }
            return new LeasesEndpoint(router, leaseEngine, () -> elections.stream()
                    .flatMap(known -> known.all().stream())
                    .map(leadership -> new LeasesEndpoint.ElectionDescriptor(leadership.election(), leadership.kind(),
                            leadership.isLeader(), leadership.token().map(FencingToken::value).orElse(null)))
                    .toList());
        }
    }
}
