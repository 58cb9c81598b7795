package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.Set;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.jdbc.datasource.AbstractDriverBasedDataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.util.ClassUtils;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.Credentials;

/**
 * Where the JDBC backend's lease bookkeeping (grants, renewals, releases) gets its connections
 * ({@code lease.jdbc.datasource.*}). An application transaction holds a connection of the application's pool while it
 * waits for a lease; were the bookkeeping on that pool too, ten such transactions on a pool of ten would leave it
 * none, and every one of them would wait for a lease that can never be granted. So by default the bookkeeping runs on
 * a small HikariCP pool of its own, {@value #NAME}: built from {@code lease.jdbc.datasource.url} when set, else a copy
 * of the application's DataSource settings. Three cases share the application's DataSource instead: one that opens a
 * connection per call (there is no pool to run dry), one that cannot be copied (said once at WARN, with the setting
 * that gives the bookkeeping a pool of its own), and {@code lease.jdbc.datasource.pool: application}.
 *
 * <p>Deliberately not a {@code DataSource} bean: a second one would make Boot's own DataSource back off and every
 * single-candidate injection of {@code DataSource} ambiguous. HikariCP is reached through {@link HikariPools}, loaded
 * only when HikariCP is on the classpath.
 */
final class LeaseBookkeepingPool implements DisposableBean {

    /** The name of the lease backend's own pool, as HikariCP's logs and metrics show it. */
    static final String NAME = "lease-bookkeeping";

    static final String HIKARI = "com.zaxxer.hikari.HikariDataSource";

    private static final String DATA_SOURCE_BUILDER = "org.springframework.boot.jdbc.DataSourceBuilder";

    /** Drivers' own DataSources that open a new connection on every call: no pool the application could exhaust. */
    private static final Set<String> CONNECTION_PER_CALL = Set.of("org.h2.jdbcx.JdbcDataSource",
            "org.postgresql.ds.PGSimpleDataSource", "org.mariadb.jdbc.MariaDbDataSource",
            "com.mysql.cj.jdbc.MysqlDataSource", "org.hsqldb.jdbc.JDBCDataSource");

    /** HikariCP's lower bound: a shorter connection timeout would silently become 30 seconds. */
    private static final Duration MIN_CONNECTION_TIMEOUT = Duration.ofMillis(250);

    private static final Log log = LogFactory.getLog(LeaseBookkeepingPool.class);

    private final DataSource target;
    private final DataSource dataSource;
    private final boolean own;
    private final String settings;

    private LeaseBookkeepingPool(DataSource target, boolean own, String settings, String described,
            String whenBusy) {
        this.target = target;
        this.own = own;
        this.settings = settings;
        this.dataSource = new BookkeepingConnections(target,
                own ? () -> "pool '" + NAME + "'" : () -> "the application's " + name(target), whenBusy,
                "fix " + settings + ".*");
        log.info("Lease bookkeeping takes its connections from " + described + ".");
    }

    /**
     * Builds the pool of its own, or decides to share the application's DataSource; refuses settings that cannot
     * work, naming the property to fix.
     *
     * @param application the application's DataSource, if it has exactly one (or a primary one)
     */
    static LeaseBookkeepingPool create(JdbcLeaseProperties.Datasource settings, @Nullable DataSource application,
            ClassLoader classLoader) {
        check(settings);
        if (settings.getUrl() != null) {
            requireHikari(classLoader);
            return own(fromSettings(settings), settings, "lease.jdbc.datasource",
                    "lease.jdbc.datasource.url " + Credentials.redact(settings.getUrl(), settings.getPassword()));
        }
        if (application == null) {
            // The condition on the JDBC configuration makes this unreachable; said plainly should it ever change.
            throw new LeaseConfigurationException("The JDBC lease backend has no DataSource to take connections "
                    + "from.", "set lease.jdbc.datasource.url, or give the application exactly one DataSource (or "
                            + "mark one @Primary).");
        }
        if (settings.getPool() == JdbcLeaseProperties.Pool.APPLICATION) {
            return shared(application, "the application's DataSource (lease.jdbc.datasource.pool: application), "
                    + "shared on purpose", "the application's transactions may hold them all: remove "
                            + "lease.jdbc.datasource.pool to give lease bookkeeping a pool of its own, or raise the "
                            + "application pool's maximum-pool-size");
        }
        DataSource unwrapped = withoutDelegates(application);
        if (opensAConnectionPerCall(unwrapped)) {
            return shared(application, "the application's DataSource, which opens a connection per call (no pool "
                    + "its transactions could hold)", "no pool stands between lease bookkeeping and the database");
        }
        String whyNot = whyNotCopied(unwrapped, classLoader);
        if (whyNot == null) {
            DataSource copy = copyOf(unwrapped, settings);
            if (copy != null) {
                return own(copy, settings, "spring.datasource", "a copy of the application's DataSource settings ("
                        + Credentials.redact(HikariPools.url(copy)) + ")");
            }
            whyNot = "its URL cannot be read";
        }
        log.warn("Lease bookkeeping shares the application's DataSource (" + ClassUtils.getShortName(
                unwrapped.getClass()) + "), which cannot be copied into a pool of its own: " + whyNot + ". While the "
                + "application's transactions hold every connection of that pool, grants wait and renewals fail, "
                + "and leases are lost. Set lease.jdbc.datasource.url (with username and password) to give lease "
                + "bookkeeping a pool of its own, or lease.jdbc.datasource.pool: application to share it on purpose "
                + "(and silence this warning).");
        return shared(application, "the application's DataSource, which could not be copied (" + whyNot + ")",
                "the application's transactions may hold them all: set lease.jdbc.datasource.url (with username "
                        + "and password) to give lease bookkeeping a pool of its own");
    }

    /** The connections lease bookkeeping uses: a failure to get one names the pool and the setting. */
    DataSource dataSource() {
        return dataSource;
    }

    /** The pool itself, or the application's DataSource. */
    DataSource target() {
        return target;
    }

    /** Whether the pool is the lease backend's own (and closed with the context). */
    boolean own() {
        return own;
    }

    /** The properties that configure the connections, such as {@code spring.datasource}. */
    String settings() {
        return settings;
    }

    @Override
    public void destroy() {
        if (!own) {
            return;
        }
        try {
            ((AutoCloseable) target).close();
        }
        catch (Exception ex) {
            log.warn("Could not close the lease backend's own connection pool: " + ex);
        }
    }

    private static LeaseBookkeepingPool own(DataSource pool, JdbcLeaseProperties.Datasource settings,
            String configuredBy, String from) {
        return new LeaseBookkeepingPool(pool, true, configuredBy, "a pool of its own, '" + NAME + "' (connections: "
                + settings.getMaximumPoolSize() + ", waiting at most "
                + Durations.format(settings.getConnectionTimeout()) + " for one), from " + from,
                "every connection of this pool of the lease backend's own was busy: raise "
                        + "lease.jdbc.datasource.maximum-pool-size (now " + settings.getMaximumPoolSize()
                        + ") or lease.jdbc.datasource.connection-timeout (now "
                        + Durations.format(settings.getConnectionTimeout()) + ")");
    }

    private static LeaseBookkeepingPool shared(DataSource application, String pool, String whenBusy) {
        return new LeaseBookkeepingPool(withoutTransactionAwareness(application), false, "spring.datasource", pool,
                whenBusy);
    }

    private static void check(JdbcLeaseProperties.Datasource settings) {
        if (settings.getMaximumPoolSize() < 1) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.maximum-pool-size is "
                    + settings.getMaximumPoolSize() + ".", "set lease.jdbc.datasource.maximum-pool-size to 1 or more "
                            + "(the default 4 is enough for one renewal batch, a release and a few grants at a time).");
        }
        if (settings.getConnectionTimeout().compareTo(MIN_CONNECTION_TIMEOUT) < 0) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.connection-timeout is "
                    + Durations.format(settings.getConnectionTimeout()) + ", below HikariCP's minimum of 250ms.",
                    "set lease.jdbc.datasource.connection-timeout to 250ms or more (the default is 500ms).");
        }
        if (settings.getUrl() != null && settings.getPool() == JdbcLeaseProperties.Pool.APPLICATION) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.url is set, but lease.jdbc.datasource.pool "
                    + "is 'application': lease bookkeeping cannot both share the application's DataSource and run on "
                    + "a pool of its own.", "remove lease.jdbc.datasource.pool to use the pool of its own at that url, "
                            + "or remove lease.jdbc.datasource.url to share the application's DataSource.");
        }
    }

    private static void requireHikari(ClassLoader classLoader) {
        if (!ClassUtils.isPresent(HIKARI, classLoader)) {
            throw new LeaseConfigurationException("lease.jdbc.datasource.url is set, but HikariCP, which builds the "
                    + "lease backend's own pool, is not on the classpath.", "add com.zaxxer:HikariCP (it comes with "
                            + "spring-boot-starter-jdbc), or remove lease.jdbc.datasource.url to use the "
                            + "application's DataSource.");
        }
    }

    private static DataSource fromSettings(JdbcLeaseProperties.Datasource settings) {
        try {
            return HikariPools.fromSettings(settings);
        }
        catch (RuntimeException ex) {
            throw new LeaseConfigurationException("The lease backend's own pool cannot be built from "
                    + "lease.jdbc.datasource.url '" + Credentials.redact(settings.getUrl()) + "': "
                    + Credentials.redact(ex.getMessage(), settings.getUrl(), settings.getPassword()) + ".",
                    "fix lease.jdbc.datasource.* (url, username, password, driver-class-name), or remove "
                            + "lease.jdbc.datasource.url to use the application's DataSource.");
        }
    }

    /** Why the application's DataSource cannot be copied, or null when it can be tried. */
    private static @Nullable String whyNotCopied(DataSource application, ClassLoader classLoader) {
        if (!ClassUtils.isPresent(HIKARI, classLoader)) {
            return "HikariCP, which builds the pool, is not on the classpath (add com.zaxxer:HikariCP; it comes with "
                    + "spring-boot-starter-jdbc)";
        }
        if (!HikariPools.isHikari(application) && !ClassUtils.isPresent(DATA_SOURCE_BUILDER, classLoader)) {
            return "it is no HikariCP pool, and spring-boot-jdbc, which reads the settings of other pools, is not on "
                    + "the classpath";
        }
        return null;
    }

    /** A HikariCP pool's whole configuration; another pool's URL, login and driver; null without a URL. */
    private static @Nullable DataSource copyOf(DataSource application, JdbcLeaseProperties.Datasource settings) {
        if (HikariPools.isHikari(application)) {
            return HikariPools.copyOf(application, settings);
        }
        try {
            return HikariPools.derivedFrom(application, settings);
        }
        catch (RuntimeException ex) {
            // Boot cannot read the settings of this kind of DataSource (a JNDI one, a routing one).
            return null;
        }
    }

    /** A HikariCP pool by its name (once it started), another DataSource by its class. */
    private static String name(DataSource dataSource) {
        return ClassUtils.isPresent(HIKARI, LeaseBookkeepingPool.class.getClassLoader())
                ? HikariPools.name(dataSource) : "DataSource " + ClassUtils.getShortName(dataSource.getClass());
    }

    private static boolean opensAConnectionPerCall(DataSource dataSource) {
        return dataSource instanceof AbstractDriverBasedDataSource || dataSource instanceof EmbeddedDatabase
                || CONNECTION_PER_CALL.contains(dataSource.getClass().getName());
    }

    /** Spring's wrappers (transaction-aware, lazy, user credentials) stand for the DataSource they wrap. */
    private static DataSource withoutDelegates(DataSource dataSource) {
        DataSource current = dataSource;
        while (current instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
            current = delegating.getTargetDataSource();
        }
        return current;
    }

    /**
     * A transaction-aware proxy hands out the thread's transactional connection, which lease statements would commit
     * halfway: its target gives connections of their own, as the backend itself makes sure when it gets the proxy.
     */
    private static DataSource withoutTransactionAwareness(DataSource dataSource) {
        return dataSource instanceof org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy proxy
                && proxy.getTargetDataSource() != null ? proxy.getTargetDataSource() : dataSource;
    }
}
