package dev.lease.fence.jpa;

import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;

import dev.lease.fence.FenceListener;

/**
 * Hibernate's entry point of {@link FenceColumn} fencing, found through {@code META-INF/services} whenever this
 * module and Hibernate are on the classpath, so no configuration can leave a fenced entity unfenced. It checks the
 * fenced entities when the session factory is built (a bad mapping fails the startup) and registers the listener
 * that fences their writes. Applications do not use it directly.
 */
public final class FenceColumnIntegrator implements Integrator {

    /**
     * Session factory property whose value, a {@link FenceListener}, is told of every stale token refused; the
     * Spring Boot auto-configuration sets it to the application's listeners (the {@code lease.fence.rejected}
     * counter).
     */
    public static final String LISTENER_PROPERTY = "dev.lease.fence.jpa.listener";

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
        FenceWriteListener writes = new FenceWriteListener(fenced, found.classes(), rule, listener,
                sessionFactory.getJdbcServices().getDialect().getForUpdateString());
        EventListenerRegistry registry = sessionFactory.getServiceRegistry().getService(EventListenerRegistry.class);
        registry.appendListeners(EventType.PRE_INSERT, writes);
        registry.appendListeners(EventType.PRE_UPDATE, writes);
        registry.appendListeners(EventType.PRE_DELETE, writes);
        registry.appendListeners(EventType.POST_LOAD, writes);
        registry.appendListeners(EventType.PERSIST, writes);
        registry.appendListeners(EventType.MERGE, writes);
        log.info("Fenced JPA entities (@FenceColumn): " + fenced + (rule == FenceRule.AT_MOST_TOKEN ? ""
                : " with a replaced fence rule " + rule));
    }
}
