package dev.lease.fence;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.sql.LockWaits;
import dev.lease.sql.SqlDialect;

/**
 * Fence at grant over JDBC, for {@link JdbcFence} and {@link FencedTable}: where the advance runs and how long it may
 * wait.
 *
 * <ul>
 *   <li>A fence the caller's transaction on the fence's DataSource already sees at the token is left alone: that
 *       transaction may hold the row's lock (it wrote the row in a section it re-entered), which a transaction of
 *       our own would wait for, for ever on PostgreSQL.</li>
 *   <li>A section that re-enters its lease joins the caller's transaction on the fence's DataSource when there is
 *       one, for the same reason; otherwise the advance runs in a short transaction of its own, committed before
 *       the work starts.</li>
 *   <li>Every lock wait of the advance is bounded by the lease's validity (a lock timeout on its transaction, set
 *       back afterwards): a row held by another transaction that does not end (a stale holder paused inside its own
 *       fenced transaction) makes the grant fail with {@link CannotAcquireLockException} saying so, instead of
 *       blocking the name while the engine renews it.</li>
 * </ul>
 */
final class FenceAtGrant {

    /**
     * A fence row: how messages name it, the table its lock is in, and how to read its fence (one bind: the key).
     */
    record Target(String name, String table, String readFence, Object key) {
    }

    private final JdbcOperations jdbc;
    private final OwnTransaction ownTransaction;
    private final Supplier<SqlDialect> dialect;

    FenceAtGrant(JdbcOperations jdbc, Supplier<SqlDialect> dialect) {
        this.jdbc = jdbc;
        this.ownTransaction = new OwnTransaction(jdbc);
        this.dialect = dialect;
    }

    /**
     * Runs {@code advance} (which moves the target's fence to {@code token}) as fence at grant.
     *
     * @param validity how long the lease is still valid, or null to find out from the lease bound to the thread
     *        (no bound when none holds this token)
     * @param reentered whether the section re-enters a lease its thread holds: it then joins the caller's transaction
     */
    void advance(Target target, FencingToken token, Duration validity, boolean reentered, Runnable advance) {
        Duration bound = validity != null ? validity : validityOf(token);
        if (inTransactionOfItsDataSource()) {
            if (alreadyAt(target, token)) {
                return;
            }
            if (reentered) {
                bounded(target, token, bound, advance);
                return;
            }
        }
        ownTransaction.run("Fence at grant of " + target.name(), status -> bounded(target, token, bound, advance));
    }

    private boolean inTransactionOfItsDataSource() {
        return TransactionSynchronizationManager.isActualTransactionActive() && Boolean.TRUE.equals(
                jdbc.execute((ConnectionCallback<Boolean>) LockWaits::isInThreadBoundTransaction));
    }

    /** A plain read, which waits for no lock: it sees the committed fence, or what the caller's transaction wrote. */
    private boolean alreadyAt(Target target, FencingToken token) {
        List<Long> fences = jdbc.queryForList(target.readFence(), Long.class, target.key());
        return !fences.isEmpty() && fences.get(0) != null && fences.get(0) == token.value();
    }

    /** The validity left to the lease bound to this thread that holds {@code token}, or null when none does. */
    private static Duration validityOf(FencingToken token) {
        return LeaseContext.find(token.lease()).filter(Lease::hasToken).filter(lease -> lease.token().equals(token))
                .map(Lease::remaining).orElse(null);
    }

    private void bounded(Target target, FencingToken token, Duration bound, Runnable advance) {
        LockWaits.bounded(jdbc, dialect.get(), bound, () -> {
            advance.run();
            return null;
        }, (waitedMillis, ex) -> new CannotAcquireLockException(lockWaitTimedOut(target, token, bound, waitedMillis),
                ex));
    }

    private static String lockWaitTimedOut(Target target, FencingToken token, Duration bound, long waitedMillis) {
        return "Fence at grant of " + target.name() + " for lease '" + token.lease() + "' (token " + token.value()
                + ") gave up waiting for the lock on its row of " + target.table() + " after "
                + waitedMillis + " ms: a lock wait bounded by the lease's validity ("
                + bound.toMillis() + " ms), so the lease is worth nothing by now. Another transaction holds that row "
                + "and has not ended: a holder writing the resource in its own fenced transaction (a stale holder "
                + "paused inside it keeps the lock until its connection dies), or a transaction this very thread "
                + "suspended around the leased section after writing the row. The fence was not advanced; find the "
                + "session holding the lock (pg_locks, INFORMATION_SCHEMA.INNODB_TRX, INFORMATION_SCHEMA.SESSIONS)";
    }
}
