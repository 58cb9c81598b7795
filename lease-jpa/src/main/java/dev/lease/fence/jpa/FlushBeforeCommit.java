package dev.lease.fence.jpa;

import org.hibernate.FlushMode;
import org.hibernate.event.spi.EventSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Flushes a session that holds fenced entities just before Spring commits its transaction. Hibernate would flush in
 * the commit itself, where Spring's {@code JpaTransactionManager} turns any exception into a
 * {@code TransactionSystemException}; flushed here, a refusal reaches the caller as the {@code StaleTokenException}
 * it is, and the transaction rolls back. Only where Spring's transactions are on the classpath.
 */
final class FlushBeforeCommit implements TransactionSynchronization {

    static final boolean AVAILABLE = isPresent("org.springframework.transaction.support.TransactionSynchronizationManager");

    private final EventSource session;

    private FlushBeforeCommit(EventSource session) {
        this.session = session;
    }

    /** Registers once per Spring transaction and session; nothing outside a Spring-synchronized transaction. */
    static void register(EventSource session) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        for (TransactionSynchronization registered : TransactionSynchronizationManager.getSynchronizations()) {
            if (registered instanceof FlushBeforeCommit flush && flush.session == session) {
                return;
            }
        }
        TransactionSynchronizationManager.registerSynchronization(new FlushBeforeCommit(session));
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        if (!readOnly && session.isOpen() && session.getHibernateFlushMode() != FlushMode.MANUAL
                && session.isTransactionInProgress()) {
            session.flush();
        }
    }

    static boolean isPresent(String className) {
        try {
            Class.forName(className, false, FlushBeforeCommit.class.getClassLoader());
            return true;
        }
        catch (ClassNotFoundException | LinkageError absent) {
            return false;
        }
    }
}
