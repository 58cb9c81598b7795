package dev.lease.autoconfigure;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseConfigurationException;
import dev.lease.spi.IdleDeletion;
import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * The JDBC lease backend, available when spring-jdbc is on the classpath and either the application has one DataSource
 * or {@code lease.jdbc.datasource.url} gives the backend a pool of its own (which works with no application
 * DataSource, or several).
 * It stays away when the {@code lease.*backend} properties route every lease elsewhere, so that an application
 * on ZooKeeper does not get a lease table in its database. Creates the lease table per
 * {@code lease.jdbc.initialize-schema}; checks that the table can be read when something takes leases
 * ({@link LeaseStoreStartupCheck}). Lease bookkeeping runs on a small pool of its own, by default a copy of the
 * application's DataSource settings ({@link LeaseBookkeepingPool}).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JdbcTemplate.class)
@Conditional(JdbcLeaseConfiguration.OnDataSourceForLeases.class)
@ConditionalOnLeaseBackend(BackendType.JDBC)
@EnableConfigurationProperties(JdbcLeaseProperties.class)
class JdbcLeaseConfiguration {

    private static final JdbcStartupChecks CHECKS = new JdbcStartupChecks("The JDBC lease backend",
            "dev/lease/jdbc/schema-<platform>.sql", "lease.jdbc.initialize-schema");

    /** One application DataSource to share, or a pool of the backend's own. */
    static final class OnDataSourceForLeases extends AnyNestedCondition {

        OnDataSourceForLeases() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnSingleCandidate(DataSource.class)
        static final class ApplicationDataSource {
        }

        @ConditionalOnProperty("lease.jdbc.datasource.url")
        static final class OwnPool {
        }
    }

    /**
     * Where lease bookkeeping gets its connections, by default a pool of its own (see {@link LeaseBookkeepingPool}),
     * when the backend is the starter's (a backend of the application's own would leave it unused); a pool of its own
     * is closed with the context, after the backend that uses it.
     */
    @Bean
    @ConditionalOnMissingBean(JdbcLeaseBackend.class)
    LeaseBookkeepingPool leaseBookkeepingPool(JdbcLeaseProperties jdbc, ObjectProvider<DataSource> applicationDataSource,
            ResourceLoader resources) {
        return LeaseBookkeepingPool.create(jdbc.getDatasource(), applicationDataSource.getIfUnique(),
                resources.getClassLoader());
    }

    /** Injected as a parameter, the pool is recorded as a dependency of the backend: it closes after the backend. */
    @Bean
    @ConditionalOnMissingBean
    JdbcLeaseBackend jdbcLeaseBackend(LeaseBookkeepingPool pool, JdbcLeaseProperties jdbc, Environment environment,
            LeaseStoreStartupCheck storeCheck) {
        JdbcLeaseBackend backend;
        try {
            backend = new JdbcLeaseBackend(pool.dataSource(), jdbc.getTable(), jdbc.getToken(),
                    jdbc.getDeleteIdleAfter());
        }
        catch (IdleDeletion.Refused ex) {
            throw new LeaseConfigurationException(ex.description(), ex.action());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage() + ".",
                    "set lease.jdbc.table to a plain table name such as 'lease_lock' or 'leases.lease_lock'.");
        }
        Runnable connection = () -> CHECKS.checkConnection(pool.target(), pool.settings(), environment,
                " Or route leases to another backend with lease.backend.");
        if (JdbcSchemaInitialization.shouldCreate(jdbc.getInitializeSchema(), pool.target())) {
            connection.run();
            backend.createSchema();
        }
        // Once every bean exists, and only if something takes leases: a service that only checks tokens needs no table.
        storeCheck.register(backend.id(), () -> {
            connection.run();
            CHECKS.verifyTable(backend.table(), backend::verifySchema);
        });
        return backend;
    }
}
