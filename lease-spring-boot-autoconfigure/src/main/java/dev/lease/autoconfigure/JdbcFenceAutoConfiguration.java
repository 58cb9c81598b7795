package dev.lease.autoconfigure;

import java.util.List;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.fence.Fence;
import dev.lease.fence.FenceListener;
import dev.lease.fence.JdbcFence;

/**
 * The application's {@link Fence} bean: a {@link JdbcFence} over the application's {@code JdbcTemplate} (so it
 * joins the application's transactions), with the {@code lease_fence} table created per
 * {@code lease.fence.initialize-schema} and checked at startup, telling every
 * {@link FenceListener} bean (such as the {@code lease.fence.rejected} counter) about the stale tokens it refuses.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration"})
@ConditionalOnClass({JdbcOperations.class, JdbcFence.class})
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(JdbcFenceProperties.class)
public class JdbcFenceAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public JdbcFenceAutoConfiguration() {
    }

    /** Checks the auto-configured fence's table once every bean exists, if there is such a fence. */
    @Bean
    JdbcFenceTableCheck jdbcFenceTableCheck(ConfigurableListableBeanFactory beanFactory,
            Environment environment) {
        return new JdbcFenceTableCheck(beanFactory, environment);
    }

    /**
     * The application's {@code Fence} bean, unless it declares one of its own (another store's). Its table is checked
     * at startup ({@link JdbcFenceTableCheck}), as the lease table is: a missing migration fails the startup, not the
     * first fenced write.
     */
    @Bean
    @ConditionalOnMissingBean(Fence.class)
    JdbcFence jdbcFence(DataSource dataSource, ObjectProvider<JdbcOperations> jdbcOperations,
            JdbcFenceProperties properties, ObjectProvider<FenceListener> listeners, JdbcFenceTableCheck check) {
        List<FenceListener> told = listeners.orderedStream().toList();
        JdbcFence fence = new JdbcFence(jdbcOperations.getIfUnique(() -> new JdbcTemplate(dataSource)),
                (table, rejection) -> told.forEach(listener -> {
                    try {
                        listener.rejected(table, rejection);
                    }
                    catch (RuntimeException ignored) {
                        // One failing listener must not keep the others from hearing of the refusal.
                    }
                }), properties.getIdleTimeout());
        if (JdbcSchemaInitialization.shouldCreate(properties.getInitializeSchema(), dataSource)) {
            fence.createSchema();
        }
        check.check(fence, dataSource);
        return fence;
    }
}
