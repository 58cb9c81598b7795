package dev.lease.autoconfigure;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.util.ClassUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.spi.Credentials;

/**
 * The lease backend's own small HikariCP pool ({@code lease.jdbc.datasource.*}), so that lease bookkeeping never waits
 * for a connection of an exhausted application pool. Deliberately not a {@code DataSource} bean: a second one would
 * make Boot's own DataSource back off and every single-candidate injection of {@code DataSource} ambiguous. HikariCP
 * is reached by name and its settings through a bean wrapper, so that this class loads without it.
 */
final class LeaseBookkeepingPool implements DisposableBean {

    static final String HIKARI = "com.zaxxer.hikari.HikariDataSource";

    private static final Log log = LogFactory.getLog(LeaseBookkeepingPool.class);

    private final DataSource dataSource;

    private LeaseBookkeepingPool(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Builds the pool, or refuses the settings naming the property to fix. */
    static LeaseBookkeepingPool create(JdbcLeaseProperties.Datasource settings, ClassLoader classLoader) {
        if (settings.getMaximumPoolSize() < 1) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.maximum-pool-size is "
                    + settings.getMaximumPoolSize() + ".", "set lease.jdbc.datasource.maximum-pool-size to 1 or more "
                            + "(the default 4 is enough for one renewal batch, a release and a few grants at a time).");
        }
        if (!ClassUtils.isPresent(HIKARI, classLoader)) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.url is set, but HikariCP, which builds the "
                    + "lease backend's own pool, is not on the classpath.", "add com.zaxxer:HikariCP (it comes with "
                            + "spring-boot-starter-jdbc), or remove lease.jdbc.datasource.url to use the "
                            + "application's DataSource.");
        }
        DataSource pool;
        try {
            @SuppressWarnings("unchecked")
            Class<? extends DataSource> type = (Class<? extends DataSource>) ClassUtils.forName(HIKARI, classLoader);
            pool = DataSourceBuilder.create(classLoader).type(type).url(settings.getUrl())
                    .username(settings.getUsername()).password(settings.getPassword())
                    .driverClassName(settings.getDriverClassName()).build();
        }
        catch (ClassNotFoundException | RuntimeException ex) {
            throw new LeaseConfigurationException("The lease backend's own pool cannot be built from "
                    + "lease.jdbc.datasource.url '" + Credentials.redact(settings.getUrl()) + "': "
                    + Credentials.redact(ex.getMessage(), settings.getUrl(), settings.getPassword()) + ".",
                    "fix lease.jdbc.datasource.* (url, username, password, driver-class-name), or remove "
                            + "lease.jdbc.datasource.url to use the application's DataSource.");
        }
        BeanWrapperImpl hikari = new BeanWrapperImpl(pool);
        hikari.setPropertyValue("maximumPoolSize", settings.getMaximumPoolSize());
        hikari.setPropertyValue("minimumIdle", 1);
        hikari.setPropertyValue("poolName", "lease-bookkeeping");
        return new LeaseBookkeepingPool(pool);
    }

    DataSource dataSource() {
        return dataSource;
    }

    @Override
    public void destroy() {
        try {
            ((AutoCloseable) dataSource).close();
        }
        catch (Exception ex) {
            log.warn("Could not close the lease backend's own connection pool: " + ex);
        }
    }
}
