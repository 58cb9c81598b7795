package dev.lease.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

import dev.lease.core.LeaseEngine;
import dev.lease.fence.FenceListener;
import dev.lease.fence.R2dbcFence;
import dev.lease.reactive.ReactiveGrantFence;
import dev.lease.reactive.ReactiveLeaseTemplate;

/**
 * Reactive leases when Reactor is on the classpath: a {@link ReactiveLeaseTemplate} over the {@link LeaseEngine}
 * (what {@code @Leased}/{@code @LeaderOnly} {@code Mono}/{@code Flux} methods run through), and with a single R2DBC
 * {@code DatabaseClient}, an {@link R2dbcFence} over it that also advances fences at grant without blocking, its
 * fenced transactions' idle time bounded by {@code lease.fence.idle-timeout}.
 */
@AutoConfiguration(after = LeaseAutoConfiguration.class,
        afterName = {"org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                "org.springframework.boot.data.r2dbc.autoconfigure.DataR2dbcAutoConfiguration"})
@ConditionalOnClass({Mono.class, ReactiveLeaseTemplate.class})
public class ReactiveLeaseAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public ReactiveLeaseAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(LeaseEngine.class)
    ReactiveLeaseTemplate reactiveLeaseTemplate(LeaseEngine engine, ObjectProvider<ReactiveGrantFence> fence) {
        return new ReactiveLeaseTemplate(engine, fence.getIfUnique());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({DatabaseClient.class, R2dbcFence.class})
    @ConditionalOnSingleCandidate(DatabaseClient.class)
    @EnableConfigurationProperties(JdbcFenceProperties.class)
    static class R2dbcFenceConfiguration {

        @Bean
        @ConditionalOnMissingBean
        R2dbcFence r2dbcFence(DatabaseClient db, ObjectProvider<FenceListener> listeners,
                JdbcFenceProperties properties) {
            List<FenceListener> told = listeners.orderedStream().toList();
            return new R2dbcFence(db, (table, rejection) -> told.forEach(listener -> {
                try {
                    listener.rejected(table, rejection);
                }
                catch (RuntimeException ignored) {
                    // One failing listener must not keep the others from hearing of the refusal.
                }
            }), properties.getIdleTimeout());
        }

        @Bean
        @ConditionalOnMissingBean
        ReactiveGrantFence reactiveGrantFence(R2dbcFence fence) {
            // Both steps bounded by the lease's validity; a nested section's joins the caller's transaction.
            return ReactiveGrantFence.of(fence::advanceAtGrant, fence::advanceOnReentry);
        }
    }
}
