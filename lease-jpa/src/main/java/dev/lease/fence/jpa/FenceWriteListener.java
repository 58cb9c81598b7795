package dev.lease.fence.jpa;

import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.hibernate.HibernateException;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.CollectionEntry;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.AbstractCollectionEvent;
import org.hibernate.event.spi.EventSource;
import org.hibernate.event.spi.MergeContext;
import org.hibernate.event.spi.MergeEvent;
import org.hibernate.event.spi.MergeEventListener;
import org.hibernate.event.spi.PersistContext;
import org.hibernate.event.spi.PersistEvent;
import org.hibernate.event.spi.PersistEventListener;
import org.hibernate.event.spi.PostLoadEvent;
import org.hibernate.event.spi.PostLoadEventListener;
import org.hibernate.event.spi.PreCollectionRecreateEvent;
import org.hibernate.event.spi.PreCollectionRecreateEventListener;
import org.hibernate.event.spi.PreCollectionRemoveEvent;
import org.hibernate.event.spi.PreCollectionRemoveEventListener;
import org.hibernate.event.spi.PreCollectionUpdateEvent;
import org.hibernate.event.spi.PreCollectionUpdateEventListener;
import org.hibernate.event.spi.PreDeleteEvent;
import org.hibernate.event.spi.PreDeleteEventListener;
import org.hibernate.event.spi.PreInsertEvent;
import org.hibernate.event.spi.PreInsertEventListener;
import org.hibernate.event.spi.PreUpdateEvent;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;

import dev.lease.FencingToken;
import dev.lease.fence.FenceListener;
import dev.lease.fence.StaleTokenException;

/**
 * Fences each insert, update and delete of a {@link FenceColumn} entity as Hibernate is about to execute it: locks
 * and reads the row's fence, refuses a token lower than it, and writes the token into the statement's state (and
 * the entity) so that the same statement moves the fence. One extra statement per write; the lock orders writers
 * until commit. A change of one of the entity's collections is fenced as a write of the entity (its row locked,
 * checked and its fence moved); a delete leaves the row's fence behind as a tombstone ({@link Tombstones}), which an
 * insert of the same id checks once the row is gone.
 *
 * <p>It also watches fenced entities enter a session (loaded, persisted, merged) inside a Spring transaction, so
 * that the session is flushed before Spring commits ({@link FlushBeforeCommit}).
 */
final class FenceWriteListener implements PreInsertEventListener, PreUpdateEventListener, PreDeleteEventListener,
        PreCollectionRecreateEventListener, PreCollectionUpdateEventListener, PreCollectionRemoveEventListener,
        PostLoadEventListener, PersistEventListener, MergeEventListener {

    /** The writes of an entity's own row, as the refusals name them. */
    private enum Write {
        INSERT("insert"), UPDATE("update"), DELETE("delete");

        final String verb;

        Write(String verb) {
            this.verb = verb;
        }
    }

    private static final Log log = LogFactory.getLog(FenceWriteListener.class);

    private final Map<String, String> fencedProperties;
    private final Set<Class<?>> fencedClasses;
    private final Map<String, FencedRow> rows = new ConcurrentHashMap<>();
    private final FenceRule rule;
    private final FenceListener listener;
    private final String forUpdate;
    private final Tombstones tombstones;

    FenceWriteListener(Map<String, String> fencedProperties, Set<Class<?>> fencedClasses, FenceRule rule,
            FenceListener listener, String forUpdate, Tombstones tombstones) {
        this.fencedProperties = Map.copyOf(fencedProperties);
        this.fencedClasses = Set.copyOf(fencedClasses);
        this.rule = rule;
        this.listener = listener;
        this.forUpdate = forUpdate;
        this.tombstones = tombstones;
    }

    @Override
    public boolean onPreInsert(PreInsertEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), event.getState(), event.getSession(), Write.INSERT);
        return false;
    }

    @Override
    public boolean onPreUpdate(PreUpdateEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), event.getState(), event.getSession(), Write.UPDATE);
        return false;
    }

    @Override
    public boolean onPreDelete(PreDeleteEvent event) {
        fence(event.getPersister(), event.getEntity(), event.getId(), null, event.getSession(), Write.DELETE);
        return false;
    }

    @Override
    public void onPreRecreateCollection(PreCollectionRecreateEvent event) {
        fenceCollection(event);
    }

    @Override
    public void onPreUpdateCollection(PreCollectionUpdateEvent event) {
        fenceCollection(event);
    }

    @Override
    public void onPreRemoveCollection(PreCollectionRemoveEvent event) {
        fenceCollection(event);
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

    private FencedRow row(EntityPersister persister, String property) {
        return rows.computeIfAbsent(persister.getEntityName(), name -> FencedRow.of(persister, property, forUpdate));
    }

    private void fence(EntityPersister persister, Object entity, Object id, Object[] state,
            SharedSessionContractImplementor session, Write write) {
        String property = fencedProperties.get(persister.getEntityName());
        if (property == null) {
            return;
        }
        FencedRow row = row(persister, property);
        FencingToken token = token(row, property, id, write.verb);
        if (token == null) {
            if (write == Write.DELETE) {
                // Unfenced, yet the row's fence outlives it: an older holder must not bring the row back afterwards.
                row.lockAndRead(session, persister, id, tombstones.idle())
                        .ifPresent(kept -> tombstones.keep(session, row.resource(id), kept));
            }
            return;
        }
        // A new entity with a generated identity has no row yet (and no id until the insert); any other may have one.
        if (id != null) {
            OptionalLong stored = row.lockAndRead(session, persister, id, tombstones.idle());
            // No row: a delete may have left its fence behind, which an insert of the same id must respect.
            OptionalLong gone = stored.isEmpty() && write == Write.INSERT
                    ? tombstones.lockAndRead(session, row.resource(id)) : OptionalLong.empty();
            long current = stored.isPresent() ? stored.getAsLong() : gone.orElse(0);
            if ((stored.isPresent() || gone.isPresent()) && !rule.accepts(current, token.value())) {
                throw rejected(row.stale(id, token, current), row);
            }
            if (write == Write.DELETE && stored.isPresent()) {
                tombstones.keep(session, row.resource(id), token.value());
            }
        }
        if (state != null) {
            state[row.index] = token.value();
            persister.setValue(entity, row.index, token.value());
        }
    }

    /**
     * The collection's persister, read from the session's entry for it: Hibernate 7.4's events carry it, 7.2's (Spring
     * Boot 4.0) do not, and the entry has it on both (current for a recreate or update, loaded for a remove).
     */
    private static CollectionPersister persisterOf(PersistentCollection<?> collection, EventSource session) {
        CollectionEntry entry = session.getPersistenceContextInternal().getCollectionEntry(collection);
        if (entry != null && entry.getCurrentPersister() != null) {
            return entry.getCurrentPersister();
        }
        if (entry != null && entry.getLoadedPersister() != null) {
            return entry.getLoadedPersister();
        }
        return session.getFactory().getMappingMetamodel().getCollectionDescriptor(collection.getRole());
    }

    /**
     * A change of a fenced entity's collection (element collection, join table, unidirectional one-to-many) is a
     * write of the entity, although no statement touches its row: the owner's row is locked and checked as for an
     * update, and its fence moved to the token.
     */
    private void fenceCollection(AbstractCollectionEvent event) {
        String owner = event.getAffectedOwnerEntityName();
        String property = owner == null ? null : fencedProperties.get(owner);
        if (property == null) {
            return;
        }
        EventSource session = event.getSession();
        if (session == null) {
            throw new IllegalStateException("Refused to write the collection " + event.getCollection().getRole()
                    + " of fenced entity " + owner + " through a StatelessSession, whose collection events carry no "
                    + "session to check the owner's @FenceColumn (" + property + ") in: write it through a Session "
                    + "(an EntityManager).");
        }
        CollectionPersister collection = persisterOf(event.getCollection(), session);
        if (collection.isInverse()) {
            return; // mappedBy: the other side's entity writes it, fenced as that entity
        }
        EntityPersister persister = session.getFactory().getMappingMetamodel().getEntityDescriptor(owner);
        FencedRow row = row(persister, property);
        Object id = event.getAffectedOwnerIdOrNull();
        String write = "change the collection " + collection.getRole() + " of";
        FencingToken token = token(row, property, id, write);
        if (token == null) {
            return;
        }
        if (id == null) {
            throw new IllegalStateException("Refused to " + write + " an entity " + row.entity + " whose id Hibernate"
                    + " does not tell: its @FenceColumn (" + property + ") cannot be checked.");
        }
        OptionalLong stored = row.lockAndRead(session, persister, id, tombstones.idle());
        if (stored.isEmpty()) {
            return; // no owner row: the collection's rows cannot refer to it either
        }
        if (!rule.accepts(stored.getAsLong(), token.value())) {
            throw rejected(row.stale(id, token, stored.getAsLong()), row);
        }
        if (stored.getAsLong() != token.value()) {
            row.raise(session, persister, id, token.value());
            Object entity = event.getAffectedOwnerOrNull();
            EntityEntry owned = entity == null ? null : session.getPersistenceContextInternal().getEntry(entity);
            if (owned != null) {
                // The entity and its snapshot both say what the row says now: no dirty owner update follows.
                persister.setValue(entity, row.index, token.value());
                if (owned.getLoadedState() != null) {
                    owned.getLoadedState()[row.index] = token.value();
                }
            }
        }
    }

    /** The token of this thread's write; null for an opted-out write ({@link UnfencedWrites}), refused otherwise. */
    private static FencingToken token(FencedRow row, String property, Object id, String write) {
        Tokens.Found found = Tokens.find();
        if (found.token() != null) {
            return found.token();
        }
        String reason = UnfencedWrites.currentReason();
        if (reason == null) {
            throw Tokens.missing(found, row, property, id, write);
        }
        log.warn("Unfenced write (" + write + " " + row.resource(id) + ") (UnfencedWrites): "
                + reason.replaceAll("\\p{Cntrl}", "?"));
        return null;
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
