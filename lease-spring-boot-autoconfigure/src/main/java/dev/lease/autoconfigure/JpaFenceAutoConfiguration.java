package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.context.annotation.Bean;

import dev.lease.fence.FenceListener;

/**
 * Fenced JPA entities ({@code dev.lease.fence.jpa.FenceColumn}): lease-jpa's Hibernate integration fences them
 * wherever Hibernate runs, found by Hibernate itself; this only tells it about the application's
 * {@link FenceListener} beans (the {@code lease.fence.rejected} counter) and the fenced transactions' idle bound
 * ({@code lease.fence.idle-timeout}, as for {@code JdbcFence}), through Hibernate properties. Named by strings, so this
 * module does not depend on lease-jpa.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration")
@ConditionalOnClass(name = {JpaFenceAutoConfiguration.FENCE_COLUMN, "org.hibernate.SessionFactory",
        "org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer",
        "dev.lease.fence.FenceListener"})
@EnableConfigurationProperties(JdbcFenceProperties.class)
public class JpaFenceAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public JpaFenceAutoConfiguration() {
    }

    static final String FENCE_COLUMN = "dev.lease.fence.jpa.FenceColumn";

    /** {@code dev.lease.fence.jpa.FenceColumnIntegrator.LISTENER_PROPERTY}. */
    static final String LISTENER_PROPERTY = "dev.lease.fence.jpa.listener";

    /** {@code dev.lease.fence.jpa.FenceColumnIntegrator.IDLE_TIMEOUT_PROPERTY}. */
    static final String IDLE_TIMEOUT_PROPERTY = "dev.lease.fence.jpa.idle-timeout";

    @Bean
    HibernatePropertiesCustomizer leaseJpaFenceListener(ObjectProvider<FenceListener> listeners) {
        FenceListener all = (table, rejection) -> {
            List<FenceListener> told = listeners.orderedStream().toList();
            told.forEach(listener -> {
                try {
                    listener.rejected(table, rejection);
                }
                catch (RuntimeException ignored) {
                    // One failing listener must not keep the others from hearing of the refusal.
                }
            });
        };
        return properties -> properties.put(LISTENER_PROPERTY, all);
    }

    /**
     * The idle bound of fenced JPA transactions: {@code lease.fence.idle-timeout}, unless the application set the
     * Hibernate property itself ({@code spring.jpa.properties.dev.lease.fence.jpa.idle-timeout}).
     */
    @Bean
    HibernatePropertiesCustomizer leaseJpaFenceIdleTimeout(JdbcFenceProperties fence) {
        Duration idleTimeout = fence.getIdleTimeout();
        if (idleTimeout == null || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("lease.fence.idle-timeout is " + idleTimeout + ": it must be positive, "
                    + "or 0 to leave fenced transactions to the database's own idle settings");
        }
        return properties -> properties.putIfAbsent(IDLE_TIMEOUT_PROPERTY, idleTimeout);
    }
}
