package dev.lease.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.BeansException;
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
import org.springframework.dao.DataAccessException;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseConfigurationException;
import dev.lease.spi.IdleDeletion;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.spi.Credentials;

/**
 * The JDBC lease backend, available when spring-jdbc is on the classpath and either the application has one DataSource
 * or {@code lease.jdbc.datasource.url} gives the backend a pool of its own (which works with no application
 * DataSource, or several).
 * It stays away when the {@code lease.*backend} properties route every lease elsewhere, so that an application
 * on ZooKeeper does not get a lease table in its database. Creates the lease table per
 * {@code lease.jdbc.initialize-schema}. Lease bookkeeping runs on the application's DataSource, or on a small pool of
 * its own when {@code lease.jdbc.datasource.url} is set.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JdbcTemplate.class)
@Conditional(JdbcLeaseConfiguration.OnDataSourceForLeases.class)
@ConditionalOnLeaseBackend(BackendType.JDBC)
@EnableConfigurationProperties(JdbcLeaseProperties.class)
class JdbcLeaseConfiguration {

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
     * The lease backend's own pool, when {@code lease.jdbc.datasource.url} is set and the backend is the starter's
     * (a backend of the application's own would leave it unused); closed with the context, after the backend that
     * uses it.
     */
    @Bean
    @ConditionalOnProperty("lease.jdbc.datasource.url")
    @ConditionalOnMissingBean(JdbcLeaseBackend.class)
    LeaseBookkeepingPool leaseBookkeepingPool(JdbcLeaseProperties jdbc, ResourceLoader resources) {
        return LeaseBookkeepingPool.create(jdbc.getDatasource(), resources.getClassLoader());
    }

    @Bean
    @ConditionalOnMissingBean
    JdbcLeaseBackend jdbcLeaseBackend(ObjectProvider<DataSource> applicationDataSource,
            List<LeaseBookkeepingPool> ownPool,
            JdbcLeaseProperties jdbc, Environment environment) {
        // A list, not an ObjectProvider: injected this way the pool is recorded as a dependency of the backend, so it
        // closes only after the engine released its leases through the backend.
        LeaseBookkeepingPool pool = ownPool.isEmpty() ? null : ownPool.get(0);
        // Bookkeeping on the pool of its own when there is one; the application's DataSource otherwise (as before).
        // The condition on this class guarantees one or the other.
        DataSource dataSource = pool != null ? pool.dataSource() : applicationDataSource.getIfUnique();
        JdbcLeaseBackend backend;
        try {
            backend = new JdbcLeaseBackend(dataSource, jdbc.getTable(), jdbc.getToken(), jdbc.getDeleteIdleAfter());
        }
        catch (IdleDeletion.Refused ex) {
            throw new LeaseConfigurationException(ex.description(), ex.action());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage() + ".",
                    "set lease.jdbc.table to a plain table name such as 'lease_lock' or 'leases.lease_lock'.");
        }
        checkConnection(dataSource, environment, pool != null);
        if (JdbcSchemaInitialization.shouldCreate(jdbc.getInitializeSchema(), dataSource)) {
            backend.createSchema();
        }
        try {
            backend.verifySchema();
        }
        catch (DataAccessException ex) {
            throw new LeaseConfigurationException("The JDBC lease backend cannot read its table '" + backend.table()
                    + "': " + Credentials.redact(ex.getMostSpecificCause().getMessage()) + ".",
                    "create the table with the DDL in dev/lease/jdbc/schema-<platform>.sql (for example in a Flyway "
                            + "migration), or set lease.jdbc.initialize-schema: always.");
        }
        return backend;
    }

    /** Apart from the table check, so that an unreachable database is not reported as a missing table. */
    private static void checkConnection(DataSource dataSource, Environment environment, boolean ownPool) {
        try (Connection connection = dataSource.getConnection()) {
            // Obtaining it is the check.
        }
        catch (SQLException | RuntimeException ex) {
            String url = url(dataSource, environment, ownPool);
            String password = environment.getProperty(ownPool ? "lease.jdbc.datasource.password"
                    : "spring.datasource.password");
            throw new LeaseConfigurationException("The JDBC lease backend cannot connect to its database"
                    + (url != null ? " " + Credentials.redact(url) : "") + ": " + Credentials.redact(
                            NestedExceptionUtils.getMostSpecificCause(ex).getMessage(), url, password) + ".", "check that the database is running and reachable, and fix "
                            + (ownPool ? "lease.jdbc.datasource.*" : "spring.datasource.*")
                            + " (url, username, password); or route leases to another backend with lease.backend.");
        }
    }

    /** The DataSource's own URL where it tells (Hikari, Tomcat, DBCP2, the drivers' own), else spring.datasource.url. */
    private static @Nullable String url(DataSource dataSource, Environment environment, boolean ownPool) {
        BeanWrapper bean = new BeanWrapperImpl(dataSource);
        for (String property : new String[] {"jdbcUrl", "url"}) {
            try {
                if (bean.isReadableProperty(property) && bean.getPropertyValue(property) instanceof String url) {
                    return url;
                }
            }
            catch (BeansException ex) {
                // A getter that fails tells nothing; the message does without the URL.
            }
        }
        return environment.getProperty(ownPool ? "lease.jdbc.datasource.url" : "spring.datasource.url");
    }
}
