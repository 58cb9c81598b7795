package dev.lease.fence;

import java.time.Duration;
import java.util.Objects;

import io.r2dbc.spi.ConnectionFactory;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Mono;

import dev.lease.FencingToken;
import dev.lease.sql.FenceSql;
import dev.lease.sql.SqlDialect;

/**
 * {@link JdbcFence} for reactive applications: the same table {@code lease_fence(resource, fence)} and the same
 * statements, run through Spring's R2DBC {@link DatabaseClient} in the caller's reactive transaction. Run
 * {@link #advance} first in the transaction that writes the resource ({@code @Transactional} on a reactive method,
 * or a {@link TransactionalOperator}, of an {@code R2dbcTransactionManager} over the same {@code ConnectionFactory}):
 * its row lock serialises writers until commit, so a stale holder's write is refused with
 * {@link StaleTokenException}.
 *
 * <pre>{@code
 * return ReactiveLeaseContext.token()
 *         .flatMap(token -> fence.advance("invoice-" + id, token))
 *         .then(db.sql("UPDATE invoice SET state = 'BILLED' WHERE id = :id").bind("id", id).then())
 *         .as(transactions::transactional);
 * }</pre>
 *
 * <p>Needs spring-r2dbc (and an R2DBC driver) on the classpath; PostgreSQL, MySQL/MariaDB and H2, as JdbcFence.
 */
public final class R2dbcFence {

    private final DatabaseClient db;
    private final FenceListener listener;
    private final R2dbcFenceAtGrant atGrant;
    private final R2dbcIdleBound idleBound;
    private volatile SqlDialect dialect;

    /**
     * @param db the client of the database the fenced resource lives in, bound to the same transactions as the writes
     *        the fence protects
     */
    public R2dbcFence(DatabaseClient db) {
        this(db, (table, rejection) -> { });
    }

    /**
     * @param db the client of the database the fenced resource lives in
     * @param listener told of each refusal, such as the auto-configuration's {@code lease.fence.rejected} counter
     */
    public R2dbcFence(DatabaseClient db, FenceListener listener) {
        this(db, listener, Duration.ofSeconds(JdbcFence.DEFAULT_IDLE_TIMEOUT_SECONDS));
    }

    /**
     * A fence whose writers' reactive transactions may sit idle at most {@code idleTimeout}.
     *
     * <p>A transaction that wrote through this fence holds the row's lock until it ends. A holder stopped inside it
     * (paused, frozen, in a debugger) keeps its connection open, so the database would never end it: every
     * successor's write and fence at grant of that resource would wait for the lock as long as the holder stays
     * stopped. So the fence tells the database, in the writer's transaction, to end its session once it waited that
     * long for the writer's next statement (PostgreSQL's {@code idle_in_transaction_session_timeout}, local to the
     * transaction; MySQL's and MariaDB's {@code wait_timeout}, set back when the transaction ends; H2 has none). A
     * writer that sits idle that long inside its transaction loses it: the transaction rolls back and the next
     * statement or the commit fails. Keep it above the longest pause a live writer makes between two statements of a
     * fenced transaction, and near the leases' ttl, which is how long a successor waits for the lock at grant.
     *
     * @param db the client of the database the fenced resource lives in, bound to the same transactions as the writes
     *        the fence protects
     * @param listener told of each refusal, such as the auto-configuration's {@code lease.fence.rejected} counter
     * @param idleTimeout the longest a fenced transaction may wait for its writer's next statement;
     *        {@link Duration#ZERO} for no bound (the database's own settings)
     * @throws IllegalArgumentException when {@code idleTimeout} is negative
     */
    public R2dbcFence(DatabaseClient db, FenceListener listener, Duration idleTimeout) {
        this.db = Objects.requireNonNull(db, "db");
        this.listener = Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (idleTimeout.isNegative()) {
            throw new IllegalArgumentException("R2dbcFence idleTimeout is " + idleTimeout + ": it must be positive, or "
                    + "zero to leave fenced transactions to the database's own idle settings (lease.fence.idle-timeout)");
        }
        this.idleBound = new R2dbcIdleBound(db, this::dialect, idleTimeout);
        DefaultTransactionDefinition own = new DefaultTransactionDefinition(
                TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.atGrant = new R2dbcFenceAtGrant(db,
                TransactionalOperator.create(new R2dbcTransactionManager(db.getConnectionFactory()), own),
                this::dialect);
    }

    /**
     * In the caller's reactive transaction, moves the resource's fence up to {@code token}, or refuses a token lower
     * than one already accepted. Equal tokens pass. From then on the transaction holds the fence row's lock and may sit
     * idle at most the fence's idle timeout ({@link #R2dbcFence(DatabaseClient, FenceListener, Duration)}).
     *
     * @param resource what is being written, such as {@code "invoice-42"}
     * @param token the token of the lease the write is made under ({@code ReactiveLeaseContext.token()})
     * @return completes when the fence accepted the token; errors with {@link StaleTokenException} when the resource
     *         already accepted a higher one (the transaction must not commit the write), or with
     *         {@link IllegalStateException} when no transaction of the fence's ConnectionFactory is active
     */
    public Mono<Void> advance(String resource, FencingToken token) {
        JdbcFence.validateResource(resource);
        Objects.requireNonNull(token, "token");
        long value = token.value();
        return requireTransaction(resource, token)
                .then(Mono.defer(idleBound::apply))
                .then(update(value, resource))
                .flatMap(moved -> moved ? Mono.just(true) : insertIfAbsent(resource, value))
                // The row appeared meanwhile (a concurrent first writer); this waits for its lock and checks again.
                .flatMap(done -> done ? Mono.just(true) : update(value, resource))
                .flatMap(done -> done ? Mono.<Void>empty() : refuseUnlessEqual(resource, token));
    }

    /**
     * Fence at grant: {@link #advance} in a short transaction of its own, committed when the returned Mono completes,
     * so that from then on every write with an older token is refused. What
     * {@code dev.lease.reactive.ReactiveGrantFence.of(r2dbcFence::advanceAtGrant, r2dbcFence::advanceOnReentry)} calls
     * with the lease's validity.
     *
     * <p>When a reactive transaction of the fence's ConnectionFactory is active and already sees the fence at
     * {@code token}, nothing is done: that transaction may hold the row's lock (a section that re-entered its lease
     * wrote the resource), which a transaction of its own would wait for. No lock wait is bounded here: the lease
     * templates call {@link #advanceAtGrant(String, FencingToken, Duration)}.
     *
     * @param resource the fenced resource
     * @param token the token of the grant just made
     * @return completes once committed; errors with {@link StaleTokenException} when the lease was superseded
     */
    public Mono<Void> advanceAtGrant(String resource, FencingToken token) {
        return advanceAtGrant(resource, token, null);
    }

    /**
     * Like {@link #advanceAtGrant(String, FencingToken)}, with every lock wait bounded by {@code validity}: a lock
     * timeout on the transaction ({@code lock_timeout} on PostgreSQL, {@code innodb_lock_wait_timeout} on
     * MySQL/MariaDB, in whole seconds, {@code LOCK_TIMEOUT} on H2), set back afterwards.
     *
     * @param resource the fenced resource
     * @param token the token of the grant just made
     * @param validity how long the lease is still valid; null for no bound
     * @return completes once committed; errors with {@link StaleTokenException} when the lease was superseded, with
     *         {@link org.springframework.dao.CannotAcquireLockException} naming the lease, the token and the resource
     *         when another transaction held the fence row's lock for that long
     */
    public Mono<Void> advanceAtGrant(String resource, FencingToken token, Duration validity) {
        return Mono.defer(() -> {
            JdbcFence.validateResource(resource);
            Objects.requireNonNull(token, "token");
            return atGrant.advance(resource, token, validity, false, () -> advance(resource, token));
        });
    }

    /**
     * Fence at grant for a section nested in one of the same lease, naming a resource its grant did not fence: in the
     * caller's reactive transaction when one of the fence's ConnectionFactory is active (it may already hold the
     * fence row's lock, which a transaction of its own would wait for), else as
     * {@link #advanceAtGrant(String, FencingToken, Duration)}. Every lock wait is bounded by {@code validity}.
     *
     * @param resource the fenced resource named by the nested section
     * @param token the token of the lease held
     * @param validity how long the lease is still valid; null for no bound
     * @return completes once advanced (in the caller's transaction: committed with it); errors as
     *         {@link #advanceAtGrant(String, FencingToken, Duration)}
     */
    public Mono<Void> advanceOnReentry(String resource, FencingToken token, Duration validity) {
        return Mono.defer(() -> {
            JdbcFence.validateResource(resource);
            Objects.requireNonNull(token, "token");
            return atGrant.advance(resource, token, validity, true, () -> advance(resource, token));
        });
    }

    /**
     * The fence of a resource, read with a row lock in the caller's transaction (or in a statement of its own).
     *
     * @param resource the fenced resource
     * @return the highest token accepted, or empty when nothing was written under a lease yet
     */
    public Mono<Long> current(String resource) {
        JdbcFence.validateResource(resource);
        return db.sql(FenceSql.READ).bind("resource", resource).map(row -> row.get(0, Long.class)).first();
    }

    /**
     * Creates the {@code lease_fence} table if it does not exist, with the DDL for this database.
     *
     * @return completes once the table exists
     */
    public Mono<Void> createSchema() {
        return dialect().flatMap(d -> db.sql(FenceSql.createTable(d)).then());
    }

    private Mono<Boolean> update(long value, String resource) {
        return db.sql(FenceSql.ADVANCE).bind("token", value).bind("resource", resource).fetch().rowsUpdated()
                .map(rows -> rows == 1);
    }

    private Mono<Boolean> insertIfAbsent(String resource, long value) {
        return dialect().flatMap(d -> db.sql(FenceSql.insertIfAbsent(d)).bind("resource", resource)
                .bind("token", value).fetch().rowsUpdated().map(rows -> rows > 0));
    }

    private Mono<Void> refuseUnlessEqual(String resource, FencingToken token) {
        return current(resource)
                .switchIfEmpty(Mono.error(() -> new ConcurrencyFailureException("The fence row of resource '"
                        + resource + "' was created by a concurrent transaction this transaction cannot see "
                        + "(repeatable read); retry the transaction")))
                // Drivers counting changed rows rather than matched ones report 0 for an equal token: the fence, read
                // under the row lock, decides.
                .flatMap(current -> current == token.value() ? Mono.<Void>empty()
                        : Mono.error(JdbcFence.rejected(listener, JdbcFence.TABLE,
                                new StaleTokenException(resource, token, current))));
    }

    /**
     * In auto-commit the row lock would be released at once, so that a stale holder could pass the check and still
     * write: the check needs a reactive transaction holding a connection of this fence's ConnectionFactory.
     */
    private Mono<Void> requireTransaction(String resource, FencingToken token) {
        ConnectionFactory factory = db.getConnectionFactory();
        return TransactionSynchronizationManager.forCurrentTransaction()
                .filter(tx -> tx.isActualTransactionActive() && tx.getResource(factory) != null)
                .onErrorResume(noTransaction -> Mono.empty())
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("R2dbcFence.advance(\"" + resource + "\", "
                        + token + ") found no reactive transaction on the fence's ConnectionFactory. In auto-commit "
                        + "the fence row lock is released at once, so a stale holder could pass the check and still "
                        + "write. Run the check and the writes it protects in one transaction of an "
                        + "R2dbcTransactionManager over that ConnectionFactory: @Transactional on the reactive "
                        + "method, or TransactionalOperator.transactional(...).")))
                .then();
    }

    private Mono<SqlDialect> dialect() {
        SqlDialect known = dialect;
        if (known != null) {
            return Mono.just(known);
        }
        String product = db.getConnectionFactory().getMetadata().getName();
        return Mono.fromCallable(() -> {
            SqlDialect d = SqlDialect.forProductName(product).orElseThrow(() -> new IllegalStateException(
                    "R2dbcFence supports PostgreSQL, MySQL, MariaDB and H2, but the database is '" + product + "'."));
            dialect = d;
            return d;
        });
    }
}
