package dev.lease.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.BeansException;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseConfigurationException;
import dev.lease.jdbc.JdbcLeaseBackend;

/**
 * The JDBC lease backend, available when spring-jdbc is on the classpath and the application has one DataSource.
 * It stays away when the {@code lease.*backend} properties route every lease elsewhere, so that an application
 * on ZooKeeper does not get a lease table in its database. Creates the lease table per
 * {@code lease.jdbc.initialize-schema}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(JdbcTemplate.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnLeaseBackend(BackendType.JDBC)
class JdbcLeaseConfiguration {


    @Bean
    @ConditionalOnMissingBean
    JdbcLeaseBackend jdbcLeaseBackend(DataSource dataSource, LeaseProperties properties, Environment environment) {
        LeaseProperties.Jdbc jdbc = properties.getJdbc();
        JdbcLeaseBackend backend;
        try {
            backend = new JdbcLeaseBackend(dataSource, jdbc.getTable());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage() + ".",
                    "set lease.jdbc.table to a plain table name such as 'lease_lock' or 'leases.lease_lock'.");
        }
        checkConnection(dataSource, environment);
        if (JdbcSchemaInitialization.shouldCreate(jdbc.getInitializeSchema(), dataSource)) {
            backend.createSchema();
        }
        try {
            backend.verifySchema();
        }
        catch (DataAccessException ex) {
            throw new LeaseConfigurationException("The JDBC lease backend cannot read its table '" + backend.table()
                    + "': " + ex.getMostSpecificCause().getMessage() + ".",
                    "create the table with the DDL in dev/lease/jdbc/schema-<platform>.sql (for example in a Flyway "
                            + "migration), or set lease.jdbc.initialize-schema: always.");
        }
        return backend;
    }

    /** Apart from the table check, so that an unreachable database is not reported as a missing table. */
    private static void checkConnection(DataSource dataSource, Environment environment) {
        try (Connection connection = dataSource.getConnection()) {
            // Obtaining it is the check.
        }
        catch (SQLException | RuntimeException ex) {
            String url = url(dataSource, environment);
            throw new LeaseConfigurationException("The JDBC lease backend cannot connect to its database"
                    + (url != null ? " " + url : "") + ": " + NestedExceptionUtils.getMostSpecificCause(ex).getMessage()
                    + ".", "check that the database is running and reachable, and fix spring.datasource.* (url, "
                            + "username, password); or route leases to another backend with lease.backend.");
        }
    }

    /** The DataSource's own URL where it tells (Hikari, Tomcat, DBCP2, the drivers' own), else spring.datasource.url. */
    private static String url(DataSource dataSource, Environment environment) {
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
        return environment.getProperty("spring.datasource.url");
    }
}
