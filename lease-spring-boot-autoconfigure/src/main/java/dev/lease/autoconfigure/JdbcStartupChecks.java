package dev.lease.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.BeansException;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.dao.DataAccessException;

import dev.lease.LeaseConfigurationException;
import dev.lease.spi.Credentials;

/**
 * The startup checks of a table the starter writes (the JDBC backend's {@code lease_lock}, JdbcFence's
 * {@code lease_fence}), in the same words for each: first that the database can be reached, so that an unreachable
 * database is not reported as a missing table, then that the table can be read.
 *
 * @param owner who needs the table, as messages name it, such as {@code The JDBC lease backend}
 * @param scripts where its DDL ships, such as {@code dev/lease/jdbc/schema-<platform>.sql}
 * @param initializeSchema the property that creates it, such as {@code lease.jdbc.initialize-schema}
 */
record JdbcStartupChecks(String owner, String scripts, String initializeSchema) {

    /**
     * @param dataSource where the table lives
     * @param settings the properties that configure that DataSource, such as {@code spring.datasource}
     * @param otherwise a last sentence for the fix, or empty
     * @throws LeaseConfigurationException when no connection can be had, naming the URL (without credentials) and
     *         the properties to fix
     */
    void checkConnection(DataSource dataSource, String settings, Environment environment, String otherwise) {
        try (Connection connection = dataSource.getConnection()) {
            // Obtaining it is the check.
        }
        catch (SQLException | RuntimeException ex) {
            String url = url(dataSource, environment, settings);
            String password = environment.getProperty(settings + ".password");
            throw new LeaseConfigurationException(owner + " cannot connect to its database"
                    + (url != null ? " " + Credentials.redact(url) : "") + ": " + Credentials.redact(
                            NestedExceptionUtils.getMostSpecificCause(ex).getMessage(), url, password) + ".",
                    "check that the database is running and reachable, and fix " + settings + ".* (url, username, "
                            + "password)." + otherwise);
        }
    }

    /**
     * @param table the table's name
     * @param verify reads the table, throwing what the database answered when it cannot
     * @throws LeaseConfigurationException when the table cannot be read, with the database's answer and the fix
     */
    void verifyTable(String table, Runnable verify) {
        try {
            verify.run();
        }
        catch (DataAccessException ex) {
            throw new LeaseConfigurationException(owner + " cannot read its table '" + table + "': "
                    + Credentials.redact(ex.getMostSpecificCause().getMessage()) + ".",
                    "create the table with the DDL in " + scripts + " (for example in a Flyway migration), or set "
                            + initializeSchema + ": always.");
        }
    }

    /** The DataSource's own URL where it tells (Hikari, Tomcat, DBCP2, the drivers' own), else the property's. */
    private static @Nullable String url(DataSource dataSource, Environment environment, String settings) {
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
        return environment.getProperty(settings + ".url");
    }
}
