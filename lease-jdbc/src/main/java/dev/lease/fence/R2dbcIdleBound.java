package dev.lease.fence;

import java.time.Duration;
import java.util.function.Supplier;

import io.r2dbc.spi.Connection;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Mono;

import dev.lease.sql.SqlDialect;

/**
 * The reactive twin of {@code dev.lease.sql.IdleBound}, for {@link R2dbcFence}: bounds how long the caller's reactive
 * transaction may sit idle once it took a fence's row lock, so that a holder stopped inside it (SIGSTOP, a frozen VM,
 * a debugger), whose connection stays open, no longer keeps every successor waiting for that lock for as long as it
 * stays stopped.
 *
 * <p>Set once per transaction and connection, before the statement that locks: on PostgreSQL
 * {@code idle_in_transaction_session_timeout}, local to the transaction; on MySQL and MariaDB the session's
 * {@code wait_timeout}, set back to what it was when the transaction ends. H2 has no such bound.
 */
final class R2dbcIdleBound {

    private final DatabaseClient db;
    private final Supplier<Mono<SqlDialect>> dialect;
    private final Duration bound;

    R2dbcIdleBound(DatabaseClient db, Supplier<Mono<SqlDialect>> dialect, Duration bound) {
        this.db = db;
        this.dialect = dialect;
        this.bound = bound;
    }

    /** Bounds the caller's transaction on the fence's ConnectionFactory, unless it is bounded already. */
    Mono<Void> apply() {
        if (bound.isZero()) {
            return Mono.empty();
        }
        return dialect.get().filter(d -> d.setIdleTimeout() != null)
                .flatMap(d -> TransactionSynchronizationManager.forCurrentTransaction()
                        .onErrorResume(noTransaction -> Mono.empty())
                        .flatMap(tx -> apply(tx, d)));
    }

    private Mono<Void> apply(TransactionSynchronizationManager tx, SqlDialect d) {
        if (!tx.isSynchronizationActive()
                || !(tx.getResource(db.getConnectionFactory()) instanceof ConnectionHolder holder)) {
            return Mono.empty();
        }
        // Keyed by the connection: fences over other DatabaseClients of the same ConnectionFactory share its session
        // setting, and the first one's value to set back is the session's own. Marked before the first round trip, so
        // that writes of the transaction run concurrently (Mono.zip) read no value set by another.
        Key key = new Key(holder.getConnection());
        if (tx.hasResource(key)) {
            return Mono.empty();
        }
        tx.bindResource(key, bound);
        Mono<Object> before = d.readIdleTimeout() == null ? Mono.just(SetBack.NOTHING)
                : db.sql(d.readIdleTimeout()).map(row -> row.get(0)).first().map(SqlDialect::settingToBind);
        return before.doOnNext(value -> tx.registerSynchronization(new SetBack(tx, key, d, value)))
                .then(db.sql(d.setIdleTimeout(":timeout")).bind("timeout", d.idleTimeout(bound)).then());
    }

    /** A connection's mark, among its transaction's resources, that the transaction is bounded. */
    private record Key(Connection connection) {
    }

    /**
     * Sets the session's setting back after the transaction, on its connection, which the transaction manager still
     * holds then and hands back to the pool after.
     */
    private record SetBack(TransactionSynchronizationManager tx, Key key, SqlDialect dialect, Object before)
            implements TransactionSynchronization {

        /** Nothing to set back: the setting ended with the transaction. */
        static final Object NOTHING = new Object();

        @Override
        public Mono<Void> afterCompletion(int status) {
            tx.unbindResourceIfPossible(key);
            if (before == NOTHING) {
                return Mono.empty();
            }
            // Straight on the connection, whose bind marker on MySQL and MariaDB is the dialect's own '?'.
            return Mono.defer(() -> Mono.from(key.connection().createStatement(dialect.setIdleTimeout())
                            .bind(0, before).execute()))
                    .flatMap(result -> Mono.from(result.getRowsUpdated()))
                    .then()
                    // The session is gone (ended by this very bound, or the network): so is its setting.
                    .onErrorResume(gone -> Mono.empty());
        }
    }
}
