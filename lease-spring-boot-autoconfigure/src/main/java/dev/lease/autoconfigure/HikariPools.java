package dev.lease.autoconfigure;

import java.sql.SQLException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.util.ClassUtils;

import com.zaxxer.hikari.HikariDataSource;

/**
 * Builds the lease backend's own HikariCP pool. The only class of the starter that names HikariCP's types (its methods
 * take and give plain DataSources): it is loaded only once {@link LeaseBookkeepingPool} found HikariCP on the
 * classpath.
 */
final class HikariPools {

    private HikariPools() {
    }

    /** From {@code lease.jdbc.datasource.url}, {@code username}, {@code password} and {@code driver-class-name}. */
    static DataSource fromSettings(JdbcLeaseProperties.Datasource settings) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(settings.getUrl());
        pool.setUsername(settings.getUsername());
        pool.setPassword(settings.getPassword());
        if (settings.getDriverClassName() != null) {
            pool.setDriverClassName(settings.getDriverClassName());
        }
        return sized(pool, settings);
    }

    /**
     * A copy of the application's HikariCP configuration: the same URL or DataSource class, login, driver properties,
     * schema, initial SQL and metrics, with the size, timeouts and name of the lease backend's own pool. The copy
     * starts on its first connection, like the application's.
     *
     * @return the copy, or null when the application's DataSource is no HikariCP pool and wraps none
     */
    static @Nullable DataSource copyOf(DataSource application, JdbcLeaseProperties.Datasource settings) {
        HikariDataSource hikari = unwrap(application);
        if (hikari == null) {
            return null;
        }
        HikariDataSource pool = new HikariDataSource();
        hikari.copyStateTo(pool);
        return sized(pool, settings);
    }

    /**
     * Another pool's (Tomcat's, DBCP2's, a JNDI one's that Boot can read) URL, login and driver, as Spring Boot's
     * {@code DataSourceBuilder} reads them, in a HikariCP pool of the lease backend's own.
     *
     * @return the pool, or null when the URL cannot be read
     * @throws RuntimeException when Boot cannot read this kind of DataSource
     */
    static @Nullable DataSource derivedFrom(DataSource application, JdbcLeaseProperties.Datasource settings) {
        HikariDataSource pool = DataSourceBuilder.derivedFrom(application).type(HikariDataSource.class).build();
        return pool.getJdbcUrl() != null ? sized(pool, settings) : null;
    }

    /** The URL of a pool this class built. */
    static @Nullable String url(DataSource pool) {
        HikariDataSource hikari = unwrap(pool);
        return hikari != null ? hikari.getJdbcUrl() : null;
    }

    /** Whether the application's DataSource is a HikariCP pool, or wraps one. */
    static boolean isHikari(DataSource dataSource) {
        return unwrap(dataSource) != null;
    }

    private static @Nullable HikariDataSource unwrap(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(HikariDataSource.class) ? dataSource.unwrap(HikariDataSource.class) : null;
        }
        catch (SQLException ex) {
            return null;
        }
    }

    /** The pool's name, once it started, else the class of the DataSource. */
    static String name(DataSource dataSource) {
        HikariDataSource hikari = unwrap(dataSource);
        String name = hikari != null ? hikari.getPoolName() : null;
        return name != null ? "pool '" + name + "'" : "DataSource " + ClassUtils.getShortName(dataSource.getClass());
    }

    /**
     * Fixed size (idle connections are kept, so a burst of grants does not wait for new ones), a bounded wait,
     * autocommit (each lease statement commits alone: nothing to switch), never read-only.
     */
    private static HikariDataSource sized(HikariDataSource pool, JdbcLeaseProperties.Datasource settings) {
        long timeout = settings.getConnectionTimeout().toMillis();
        pool.setPoolName(LeaseBookkeepingPool.NAME);
        pool.setMaximumPoolSize(settings.getMaximumPoolSize());
        pool.setMinimumIdle(settings.getMaximumPoolSize());
        pool.setConnectionTimeout(timeout);
        // Checking a connection that sat idle must fit in the wait, or a dead one would make the wait longer.
        pool.setValidationTimeout(Math.min(pool.getValidationTimeout(), timeout));
        pool.setAutoCommit(true);
        pool.setReadOnly(false);
        return pool;
    }
}
