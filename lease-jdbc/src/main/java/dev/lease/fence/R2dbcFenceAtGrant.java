package dev.lease.fence;

import java.time.Duration;
import java.util.function.Supplier;

import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

import dev.lease.FencingToken;
import dev.lease.sql.SqlDialect;

/**
 * Fence at grant over R2DBC, for {@link R2dbcFence}: the reactive twin of {@link FenceAtGrant}, deciding where the
 * advance runs and how long it may wait.
 *
 * <ul>
 *   <li>A fence the caller's reactive transaction on the fence's ConnectionFactory already sees at the token is left
 *       alone: that transaction may hold the row's lock (it wrote the row in a section it re-entered), which a
 *       transaction of our own would wait for, for ever on PostgreSQL.</li>
 *   <li>A section that re-enters its lease joins the caller's reactive transaction on that ConnectionFactory when
 *       there is one, for the same reason; otherwise the advance runs in a short transaction of its own, committed
 *       before the work is subscribed to.</li>
 *   <li>Every lock wait of the advance is bounded by the lease's validity (a lock timeout on its transaction, set back
 *       afterwards): a row held by a transaction that does not end makes the grant fail with
 *       {@link CannotAcquireLockException} saying so, instead of blocking the name while the engine renews it.</li>
 * </ul>
 */
final class R2dbcFenceAtGrant {

    private static final String CURRENT = "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = :resource";

    private final DatabaseClient db;
    private final TransactionalOperator ownTransaction;
    private final Supplier<Mono<SqlDialect>> dialect;

    R2dbcFenceAtGrant(DatabaseClient db, TransactionalOperator ownTransaction, Supplier<Mono<SqlDialect>> dialect) {
        this.db = db;
        this.ownTransaction = ownTransaction;
        this.dialect = dialect;
    }

    /**
     * Runs {@code advance} (which moves the resource's fence to {@code token}) as fence at grant.
     *
     * @param validity how long the lease is still valid, or null for no bound
     * @param reentered whether the section re-enters a lease it holds: it then joins the caller's transaction
     */
    Mono<Void> advance(String resource, FencingToken token, Duration validity, boolean reentered,
            Supplier<Mono<Void>> advance) {
        Mono<Void> own = ownTransaction.transactional(Mono.defer(() -> bounded(resource, token, validity, advance)));
        return inTransactionOfItsConnectionFactory().flatMap(inTransaction -> {
            if (!inTransaction) {
                return own;
            }
            return alreadyAt(resource, token).flatMap(at -> {
                if (at) {
                    return Mono.<Void>empty();
                }
                return reentered ? bounded(resource, token, validity, advance) : own;
            });
        });
    }

    private Mono<Boolean> inTransactionOfItsConnectionFactory() {
        ConnectionFactory factory = db.getConnectionFactory();
        return TransactionSynchronizationManager.forCurrentTransaction()
                .map(tx -> tx.isActualTransactionActive() && tx.getResource(factory) != null)
                .onErrorResume(noTransaction -> Mono.just(false))
                .defaultIfEmpty(false);
    }

    /** A plain read, which waits for no lock: the committed fence, or what the caller's transaction wrote. */
    private Mono<Boolean> alreadyAt(String resource, FencingToken token) {
        return db.sql(CURRENT).bind("resource", resource).map(row -> row.get(0, Long.class)).first()
                .map(fence -> fence == token.value()).defaultIfEmpty(false);
    }

    private Mono<Void> bounded(String resource, FencingToken token, Duration bound, Supplier<Mono<Void>> advance) {
        if (bound == null) {
            return Mono.defer(advance);
        }
        return dialect.get().flatMap(d -> readLockTimeout(d).flatMap(before -> {
            long start = System.nanoTime();
            return setLockTimeout(d, d.lockTimeout(bound))
                    .then(Mono.defer(advance))
                    .onErrorMap(ex -> isLockTimeout(d, ex), ex -> new CannotAcquireLockException(
                            lockWaitTimedOut(resource, token, bound, System.nanoTime() - start), ex))
                    .onErrorResume(ex -> restore(d, before).onErrorResume(failed -> {
                        ex.addSuppressed(failed);
                        return Mono.empty();
                    }).then(Mono.error(ex)))
                    .then(restore(d, before));
        }));
    }

    /**
     * Sets the caller's lock timeout back. On PostgreSQL it is local to the transaction, which a lock timeout aborts:
     * nothing can run in it then, and the setting ends with it anyway.
     */
    private Mono<Void> restore(SqlDialect d, Object before) {
        Mono<Void> restore = setLockTimeout(d, before);
        return d == SqlDialect.POSTGRESQL ? restore.onErrorResume(aborted -> Mono.empty()) : restore;
    }

    private Mono<Object> readLockTimeout(SqlDialect d) {
        return db.sql(d.readLockTimeout()).map(row -> row.get(0)).first().map(SqlDialect::settingToBind);
    }

    private Mono<Void> setLockTimeout(SqlDialect d, Object value) {
        return db.sql(d.setLockTimeout(":timeout")).bind("timeout", value).then();
    }

    private static boolean isLockTimeout(SqlDialect d, Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof R2dbcException r2dbc && d.isLockTimeout(r2dbc.getSqlState(), r2dbc.getErrorCode())) {
                return true;
            }
        }
        return false;
    }

    private static String lockWaitTimedOut(String resource, FencingToken token, Duration bound, long waitedNanos) {
        return "Fence at grant of resource '" + resource + "' for lease '" + token.lease() + "' (token "
                + token.value() + ") gave up waiting for the lock on its row of " + JdbcFence.TABLE + " after "
                + waitedNanos / 1_000_000 + " ms: a lock wait bounded by the lease's validity (" + bound.toMillis()
                + " ms), so the lease is worth nothing by now. Another transaction holds that row and has not ended: "
                + "a holder writing the resource in its own fenced transaction (a stale holder paused inside it keeps "
                + "the lock until its connection dies), or a reactive transaction this very section's caller opened "
                + "around a nested section after writing the row. The fence was not advanced; find the session "
                + "holding the lock (pg_locks, INFORMATION_SCHEMA.INNODB_TRX, INFORMATION_SCHEMA.SESSIONS)";
    }
}
