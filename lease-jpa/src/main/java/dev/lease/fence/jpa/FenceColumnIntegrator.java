package dev.lease.fence.jpa;

import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.H2Dialect;
import org.hibernate.dialect.MySQLDialect;
import org.hibernate.dialect.PostgreSQLDialect;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;

import dev.lease.LeaseConfigurationException;
import dev.lease.fence.FenceListener;
import dev.lease.sql.FenceSql;
import dev.lease.sql.SqlDialect;

/**
 * Hibernate's entry point of {@link FenceColumn} fencing, found through {@code META-INF/services} whenever this
 * module and Hibernate are on the classpath, so no configuration can leave a fenced entity unfenced. It checks the
 * fenced entities when the session factory is built (a bad mapping fails the startup) and registers the listener
 * that fences their writes, their collections' changes included. Applications do not use it directly.
 */
public final class FenceColumnIntegrator implements Integrator {

    /**
     * Session factory property whose value, a {@link FenceListener}, is told of every stale token refused; the
     * Spring Boot auto-configuration sets it to the application's listeners (the {@code lease.fence.rejected}
     * counter).
     */
    public static final String LISTENER_PROPERTY = "dev.lease.fence.jpa.listener";

    /**
     * Session factory property: how long a transaction that locked a fenced entity's row may sit idle, waiting for the
     * application's next statement, before the database ends its session and rolls it back; a
     * {@link java.time.Duration}, a number of seconds or a text such as {@code 60s}; 60 seconds when absent, zero for no bound. A holder stopped
     * inside its fenced transaction would otherwise keep the row locked, and every successor's write and fence at
     * grant of that entity waiting, for as long as it stays stopped. Applies in Spring-managed transactions on
     * PostgreSQL, MySQL and MariaDB; the Spring Boot auto-configuration sets it from {@code lease.fence.idle-timeout}.
     */
    public static final String IDLE_TIMEOUT_PROPERTY = "dev.lease.fence.jpa.idle-timeout";

    /** Internal: a {@link FenceRule} replacing the comparison, for the fault suite's mutant only. */
    static final String RULE_PROPERTY = "dev.lease.fence.jpa.rule";

    private static final Log log = LogFactory.getLog(FenceColumnIntegrator.class);

    /** Instantiated by Hibernate's service loading. */
    public FenceColumnIntegrator() {
    }

    @Override
    public void integrate(Metadata metadata, BootstrapContext bootstrapContext,
            SessionFactoryImplementor sessionFactory) {
        FencedEntities.Found found = FencedEntities.scan(metadata);
        Map<String, String> fenced = found.properties();
        if (fenced.isEmpty()) {
            return;
        }
        Map<String, Object> settings = bootstrapContext.getServiceRegistry().requireService(ConfigurationService.class)
                .getSettings();
        FenceListener listener = settings.get(LISTENER_PROPERTY) instanceof FenceListener told ? told
                : (table, rejection) -> { };
        FenceRule rule = settings.get(RULE_PROPERTY) instanceof FenceRule given ? given : FenceRule.AT_MOST_TOKEN;
        Dialect dialect = sessionFactory.getJdbcServices().getDialect();
        FenceWriteListener writes = new FenceWriteListener(fenced, found.classes(), rule, listener,
                dialect.getForUpdateString(), Tombstones.on(IdleTimeout.of(sqlDialect(dialect, fenced),
                settings.get(IDLE_TIMEOUT_PROPERTY))));
        EventListenerRegistry registry = sessionFactory.getServiceRegistry().getService(EventListenerRegistry.class);
        registry.appendListeners(EventType.PRE_INSERT, writes);
        registry.appendListeners(EventType.PRE_UPDATE, writes);
        registry.appendListeners(EventType.PRE_DELETE, writes);
        registry.appendListeners(EventType.PRE_COLLECTION_RECREATE, writes);
        registry.appendListeners(EventType.PRE_COLLECTION_UPDATE, writes);
        registry.appendListeners(EventType.PRE_COLLECTION_REMOVE, writes);
        registry.appendListeners(EventType.POST_LOAD, writes);
        registry.appendListeners(EventType.PERSIST, writes);
        registry.appendListeners(EventType.MERGE, writes);
        log.info("Fenced JPA entities (@FenceColumn): " + fenced + (rule == FenceRule.AT_MOST_TOKEN ? ""
                : " with a replaced fence rule " + rule));
    }

    /**
     * The database of the tombstones ({@code lease_fence}), among those lease-jdbc speaks; any other fails the
     * startup, since a fenced delete could not keep its row's fence.
     */
    private static SqlDialect sqlDialect(Dialect dialect, Map<String, String> fenced) {
        if (dialect instanceof PostgreSQLDialect) {
            return SqlDialect.POSTGRESQL;
        }
        if (dialect instanceof MySQLDialect) { // MariaDB's too
            return SqlDialect.MYSQL;
        }
        if (dialect instanceof H2Dialect) {
            return SqlDialect.H2;
        }
        throw new LeaseConfigurationException("Fenced JPA entities " + fenced.keySet() + " run on a database of "
                + "Hibernate dialect " + dialect.getClass().getName() + ", where their deletes cannot keep the fence of "
                + "the deleted row (table " + FenceSql.TABLE + ", written by lease-jdbc's SQL for PostgreSQL, MySQL, "
                + "MariaDB and H2 only).", "remove @FenceColumn from these entities and fence their tables with "
                + "JdbcFence.table(...) on a supported database, or use one of those databases");
    }
}
