package dev.lease.fence.jpa;

import java.util.Map;
import java.util.Set;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.HibernateException;
import org.hibernate.event.spi.EventSource;
import org.hibernate.event.spi.MergeContext;
import org.hibernate.event.spi.MergeEvent;
import org.hibernate.event.spi.MergeEventListener;
import org.hibernate.event.spi.PersistContext;
import org.hibernate.event.spi.PersistEvent;
import org.hibernate.event.spi.PersistEventListener;
import org.hibernate.event.spi.PostLoadEvent;
import org.hibernate.event.spi.PostLoadEventListener;
import org.hibernate.event.spi.PreDeleteEvent;
import org.hibernate.event.spi.PreDeleteEventListener;
import org.hibernate.event.spi.PreInsertEvent;
import org.hibernate.event.spi.PreInsertEventListener;
import org.hibernate.event.spi.PreUpdateEvent;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.hibernate.persister.entity.EntityPersister;

import dev.lease.FencingToken;
import dev.lease.fence.FenceListener;
import dev.lease.fence.StaleTokenException;

/**
 * Fences each insert, update and delete of a {@link FenceColumn} entity as Hibernate is about to execute it: locks
 * and reads the row's fence, refuses a token lower than it, and writes the token into the statement's state (and
 * the entity) so that the same statement moves the fence. One extra statement per write; the lock orders writers
 * until commit.
 *
 * <p>It also watches fenced entities enter a session (loaded, persisted, merged) inside a Spring transaction, so
 * that the session is flushed before Spring commits ({@link FlushBeforeCommit}).
 */
final class FenceWriteListener implements PreInsertEventListener, PreUpdateEventListener, PreDeleteEventListener,
        PostLoadEventListener, PersistEventListener, MergeEventListener {

    private static final Log log = LogFactory.getLog(FenceWriteListener.class);

    private final Map<String, String> fencedProperties;
    private final Set<Class<?>> fencedClasses;
    private final Map<String, FencedRow> rows = new ConcurrentHashMap<>();
    private final FenceRule rule;
    private final FenceListener listener;
    private final String forUpdate;

    FenceWriteListener(Map<String, String> fencedProperties, Set<Class<?>> fencedClasses, FenceRule rule,
            FenceListener listener, String forUpdate) {
        this.fencedProperties = Map.copyOf(fencedProperties);
        this.fencedClasses = Set.copyOf(fencedClasses);
        this.rule = rule;
        this.listener = listener;
        this.forUpdate = forUpdate;
    }

    @Override
    public boolean onPreInsert(PreInsertEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), event.getState(), event.getSession(), "insert");
        return false;
    }

    @Override
    public boolean onPreUpdate(PreUpdateEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), event.getState(), event.getSession(), "update");
        return false;
    }

    @Override
    public boolean onPreDelete(PreDeleteEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), null, event.getSession(), "delete");
        return false;
    }

    @Override
    public void onPostLoad(PostLoadEvent event) {
        watch(event.getSession(), event.getEntity());
    }

    @Override
    public void onPersist(PersistEvent event) throws HibernateException {
        watch(event.getSession(), event.getObject());
    }

    @Override
    public void onPersist(PersistEvent event, PersistContext context) throws HibernateException {
        watch(event.getSession(), event.getObject());
    }

    @Override
    public void onMerge(MergeEvent event) throws HibernateException {
        watch(event.getSession(), event.getOriginal());
    }

    @Override
    public void onMerge(MergeEvent event, MergeContext context) throws HibernateException {
        watch(event.getSession(), event.getOriginal());
    }

    private void watch(EventSource session, Object entity) {
        if (!FlushBeforeCommit.AVAILABLE || entity == null) {
            return;
        }
        for (Class<?> type = entity.getClass(); type != null && type != Object.class; type = type.getSuperclass()) {
            if (fencedClasses.contains(type)) {
                FlushBeforeCommit.register(session);
                return;
            }
        }
    }

    private void fence(EntityPersister persister, Object entity, Object id, Object[] state,
            SharedSessionContractImplementor session, String write) {
        String property = fencedProperties.get(persister.getEntityName());
        if (property == null) {
            return;
        }
        FencedRow row = rows.computeIfAbsent(persister.getEntityName(), name -> FencedRow.of(persister, property,
                forUpdate));
        Tokens.Found found = Tokens.find();
        if (found.token() == null) {
            String reason = UnfencedWrites.currentReason();
            if (reason == null) {
                throw Tokens.missing(found, row, property, id, write);
            }
            log.warn("Unfenced " + write + " of " + row.resource(id) + " (UnfencedWrites): "
                    + reason.replaceAll("\\p{Cntrl}", "?"));
            return;
        }
        FencingToken token = found.token();
        // A new entity with a generated identity has no row yet (and no id until the insert); any other may have one.
        if (id != null) {
            OptionalLong stored = row.lockAndRead(session, persister, id);
            if (stored.isPresent() && !rule.accepts(stored.getAsLong(), token.value())) {
                throw rejected(row.stale(id, token, stored.getAsLong()), row);
            }
        }
        if (state != null) {
            state[row.index] = token.value();
            persister.setValue(entity, row.index, token.value());
        }
    }

    private StaleTokenException rejected(StaleTokenException rejection, FencedRow row) {
        try {
            listener.rejected(row.table, rejection);
        }
        catch (RuntimeException ignored) {
            // Observing a refusal must not turn it into another error.
        }
        return rejection;
    }
}
