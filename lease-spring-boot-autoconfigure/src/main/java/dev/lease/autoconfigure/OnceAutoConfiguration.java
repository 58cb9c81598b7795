package dev.lease.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.transaction.PlatformTransactionManager;

import dev.lease.LeaseConfigurationException;
import dev.lease.aop.OnceAnnotationBeanPostProcessor;
import dev.lease.aop.OnceListener;
import dev.lease.once.JdbcOnceStore;
import dev.lease.spi.OnceStore;

/**
 * {@code @Once}: the advisor for every application (so that a {@code @Once} method without a store fails the
 * startup, naming it), and, with spring-jdbc, one DataSource and its transaction manager, the {@link JdbcOnceStore}
 * over them, its table created per {@code lease.once.initialize-schema}, and the background sweep of keys older than
 * {@code lease.once.retention}.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration"})
// Not after TransactionAutoConfiguration: the transaction manager comes from the two above, and ordering this after it
// made Boot place R2dbcTransactionManagerAutoConfiguration (which TransactionAutoConfiguration follows) before the
// R2DBC ConnectionFactory existed, leaving a reactive application without its ReactiveTransactionManager.
@EnableConfigurationProperties(OnceProperties.class)
public class OnceAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public OnceAutoConfiguration() {
    }

    /**
     * The {@code @Once} advisor. A post-processor is created before properties are bound, so it reads
     * {@code lease.once.wait} from the environment itself.
     */
    @Bean
    @ConditionalOnMissingBean
    static OnceAnnotationBeanPostProcessor onceAnnotationBeanPostProcessor(ObjectProvider<OnceStore> stores,
            ObjectProvider<OnceListener> listeners, Environment environment) {
        Duration wait = Binder.get(environment).bind("lease.once.wait", Duration.class)
                .orElse(OnceProperties.DEFAULT_WAIT);
        if (wait.isNegative() || wait.isZero()) {
            throw new LeaseConfigurationException("lease.once.wait = " + wait + " must be positive.",
                    "set lease.once.wait to how long a @Once call may wait for another run of the same key, "
                            + "such as 30s.");
        }
        return new OnceAnnotationBeanPostProcessor(stores, listeners, wait);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({JdbcOperations.class, JdbcOnceStore.class})
    @ConditionalOnSingleCandidate(DataSource.class)
    static class Jdbc {

        @Bean
        @ConditionalOnMissingBean(OnceStore.class)
        @ConditionalOnSingleCandidate(PlatformTransactionManager.class)
        JdbcOnceStore jdbcOnceStore(DataSource dataSource, PlatformTransactionManager transactions,
                OnceProperties properties) {
            JdbcOnceStore store = new JdbcOnceStore(dataSource, transactions);
            if (JdbcSchemaInitialization.shouldCreate(properties.getInitializeSchema(), dataSource)) {
                store.createSchema();
            }
            return store;
        }

        @Bean
        @ConditionalOnMissingBean
        OnceSweeper leaseOnceSweeper(ObjectProvider<JdbcOnceStore> store, OnceProperties properties) {
            Duration retention = properties.getRetention();
            if (retention == null || retention.isNegative() || retention.isZero()) {
                throw new LeaseConfigurationException("lease.once.retention = " + retention + " must be positive.",
                        "set lease.once.retention to how long @Once keys are kept, longer than any retry of the "
                                + "same work, such as 30d.");
            }
            return new OnceSweeper(store, retention);
        }
    }
}
