package dev.lease.fence;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

import javax.sql.DataSource;

import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.lease.FencingToken;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseNames;
import dev.lease.sql.FenceSql;
import dev.lease.sql.IdleBound;
import dev.lease.sql.LockWaits;
import dev.lease.sql.SqlDialect;
import dev.lease.sql.SqlIdentifiers;

/**
 * Fencing at the resource, in the caller's own transaction: the check that turns a lease into a guarantee.
 *
 * <p>{@link #advance} keeps, per resource, the highest fencing token accepted so far in the table
 * {@code lease_fence(resource, fence)} and refuses lower ones with {@link StaleTokenException}. Run it first in
 * the transaction that writes the resource, with the same {@link JdbcOperations} (so the same DataSource and
 * transaction manager): the row lock it takes serialises writers until commit, so a holder that paused past its
 * lease and wakes up with an older token fails instead of overwriting its successor's work, and a rolled-back
 * write rolls the fence back with it. It refuses to run without a transaction of that DataSource: a transaction of
 * another resource on the thread (another DataSource, JMS, Kafka) does not hold the fence's row lock.
 *
 * <pre>{@code
 * @Transactional
 * public void bill(long invoiceId) {
 *     fence.advance("invoice-" + invoiceId, LeaseContext.token());
 *     jdbc.update("UPDATE invoice SET state = 'BILLED' WHERE id = ?", invoiceId);
 * }
 * }</pre>
 *
 * <p>Tables that carry their own fence column use {@link #table(String, String)} instead, which checks and moves
 * the fence in the same {@code UPDATE} as the data.
 *
 * <p>A resource must always be written under the same lease name: tokens of different leases say nothing about
 * each other.
 */
public final class JdbcFence implements Fence, GrantFence {

    /** The fence table. */
    public static final String TABLE = FenceSql.TABLE;

    /**
     * How long a transaction that wrote through a fence may sit idle, by default: {@value #DEFAULT_IDLE_TIMEOUT_SECONDS}
     * seconds.
     */
    public static final long DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

    /** Longest accepted resource name, in characters. */
    public static final int MAX_RESOURCE_LENGTH = 255;

    private static final String ADVANCE = FenceSql.positional(FenceSql.ADVANCE);

    private static final String READ = FenceSql.positional(FenceSql.READ);

    /** Without a lock: what the caller's transaction sees, waiting for nobody. */
    private static final String CURRENT = "SELECT fence FROM " + TABLE + " WHERE resource = ?";

    private final JdbcOperations jdbc;
    private final FenceListener listener;
    private final FenceAtGrant atGrant;
    private final Duration idleTimeout;
    private volatile SqlDialect dialect;

    /**
     * A fence over the given operations.
     *
     * @param jdbc operations on the DataSource the fenced resource lives in, bound to the same transactions as the
     *        writes the fence protects (the application's {@code JdbcTemplate} is the right one)
     */
    public JdbcFence(JdbcOperations jdbc) {
        this(jdbc, (table, rejection) -> { });
    }

    /**
     * A fence over the given operations that tells {@code listener} about every stale token it refuses, here and in
     * its {@link #table tables}.
     *
     * @param jdbc operations on the DataSource the fenced resource lives in, bound to the same transactions as the
     *        writes the fence protects (the application's {@code JdbcTemplate} is the right one)
     * @param listener told of each refusal, such as the auto-configuration's {@code lease.fence.rejected} counter
     */
    public JdbcFence(JdbcOperations jdbc, FenceListener listener) {
        this(jdbc, listener, Duration.ofSeconds(DEFAULT_IDLE_TIMEOUT_SECONDS));
    }

    /**
     * A fence whose writers' transactions may sit idle at most {@code idleTimeout}.
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
     * @param jdbc operations on the DataSource the fenced resource lives in, bound to the same transactions as the
     *        writes the fence protects (the application's {@code JdbcTemplate} is the right one)
     * @param listener told of each refusal, such as the auto-configuration's {@code lease.fence.rejected} counter
     * @param idleTimeout the longest a fenced transaction may wait for its writer's next statement;
     *        {@link Duration#ZERO} for no bound (the database's own settings)
     * @throws IllegalArgumentException when {@code idleTimeout} is negative
     */
    public JdbcFence(JdbcOperations jdbc, FenceListener listener, Duration idleTimeout) {
        this.jdbc = Objects.requireNonNull(jdbc, "jdbc");
        this.atGrant = new FenceAtGrant(jdbc, this::dialect);
        this.listener = Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (idleTimeout.isNegative()) {
            throw new IllegalArgumentException("JdbcFence idleTimeout is " + idleTimeout + ": it must be positive, or "
                    + "zero to leave fenced transactions to the database's own idle settings (lease.fence.idle-timeout)");
        }
        this.idleTimeout = idleTimeout;
    }

    /**
     * In the caller's transaction, moves the resource's fence up to {@code token}, or refuses a token lower than
     * one already accepted. Equal tokens pass: one holder may write many times.
     *
     * @param resource what is being written, such as {@code "invoice-42"}; at most {@value #MAX_RESOURCE_LENGTH}
     *        characters
     * @param token the token of the lease the write is made under, usually {@code LeaseContext.token()}
     * @throws StaleTokenException when the resource already accepted a higher token; the transaction must not
     *         commit the write
     * @throws IllegalStateException when no transaction of the fence's own DataSource is active (none at all, or only
     *         another resource's: another DataSource, JMS, Kafka): the check would not hold until the write
     */
    @Override
    public void advance(String resource, FencingToken token) {
        validateResource(resource);
        Objects.requireNonNull(token, "token");
        requireTransactionOfItsDataSource(resource, token);
        boundIdleTime();
        long value = token.value();
        if (jdbc.update(ADVANCE, value, resource, value) == 1) {
            return;
        }
        if (insertIfAbsent(resource, value)) {
            return;
        }
        // The row appeared meanwhile (a concurrent first writer); this waits for its lock and checks again.
        if (jdbc.update(ADVANCE, value, resource, value) == 1) {
            return;
        }
        OptionalLong current = current(resource);
        if (current.isEmpty()) {
            throw new ConcurrencyFailureException("The fence row of resource '" + LeaseNames.printable(resource)
                    + "' was created by a concurrent transaction this transaction cannot see (repeatable read); retry the transaction");
        }
        // An UPDATE to the value the fence already has changes nothing, and drivers counting changed rows rather than
        // matched ones (MySQL's useAffectedRows=true) report 0 for it: only the fence, read under the row lock, says
        // whether the token was refused.
        if (current.getAsLong() == value) {
            return;
        }
        throw rejected(listener, TABLE, new StaleTokenException(resource, token, current.getAsLong()));
    }

    /**
     * Bounds how long the caller's transaction may sit idle from now on (see
     * {@link #JdbcFence(JdbcOperations, FenceListener, Duration)}): before the statement that takes a fence's row lock.
     */
    void boundIdleTime() {
        if (idleTimeout.isZero()) {
            return;
        }
        SqlDialect d = dialect();
        jdbc.execute((ConnectionCallback<Void>) connection -> {
            IdleBound.apply(connection, d, idleTimeout);
            return null;
        });
    }

    /** Tells the listener, whatever it throws: a refused write must reach its caller as a refusal. */
    static StaleTokenException rejected(FenceListener listener, String table, StaleTokenException rejection) {
        try {
            listener.rejected(table, rejection);
        }
        catch (RuntimeException ignored) {
            // Observing a refusal must not turn it into another error.
        }
        return rejection;
    }

    private void requireTransactionOfItsDataSource(String resource, FencingToken token) {
        if (Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) LockWaits::isInThreadBoundTransaction))) {
            return;
        }
        String found = TransactionSynchronizationManager.isActualTransactionActive()
                ? "the transaction active on this thread belongs to another transaction manager (another DataSource,"
                        + " JMS, Kafka...)"
                : "no transaction is active";
        throw new IllegalStateException("JdbcFence.advance(\"" + resource + "\", " + token + ") found no transaction "
                + "on the fence's DataSource: " + found + ". In auto-commit the fence row lock is released at once, so "
                + "a stale holder could pass the check and still write. Run the check and the writes it protects in "
                + "one transaction of the transaction manager of the DataSource this JdbcFence's JdbcOperations uses (its "
                + "DataSourceTransactionManager, or JTA): @Transactional(\"<that transaction manager>\") or a "
                + "TransactionTemplate over it.");
    }

    /**
     * Fence at grant: {@link #advance} in a short transaction of its own, committed before this method returns, so
     * that from then on every write with an older token is refused, even before the new holder writes anything.
     * {@link dev.lease.Leased#fence()} calls it right after the grant; a transaction the caller is in is suspended
     * meanwhile. Costs one more transaction per grant.
     *
     * <p>When a transaction of the fence's DataSource on this thread already sees the fence at {@code token}, nothing
     * is done: that transaction may hold the row's lock (a section that re-entered its lease wrote the resource),
     * which a transaction of its own would wait for. A lock wait of the advance lasts no longer than the validity of
     * the lease bound to this thread that holds {@code token}, if any.
     *
     * @throws StaleTokenException when the resource already accepted a newer token: the lease was superseded
     * @throws org.springframework.dao.CannotAcquireLockException when another transaction held the fence row's lock
     *         for as long as the lease was valid
     * @throws IllegalStateException when this fence was not built over a {@code JdbcTemplate} (no DataSource to open
     *         a transaction on)
     */
    @Override
    public void advanceAtGrant(String resource, FencingToken token) {
        advanceAtGrant(resource, token, null);
    }

    /**
     * Like {@link #advanceAtGrant(String, FencingToken)}, with every lock wait bounded by {@code validity}: a lock
     * timeout on the transaction, set back afterwards.
     *
     * @param validity how long the lease is still valid; null to take it from the lease bound to this thread
     * @throws org.springframework.dao.CannotAcquireLockException when another transaction held the fence row's lock
     *         for that long, naming the lease, the token and the resource
     */
    @Override
    public void advanceAtGrant(String resource, FencingToken token, Duration validity) {
        atGrant.advance(target(resource), token, validity, false, () -> advance(resource, token));
    }

    /**
     * Fence at grant for a section that re-enters its lease: in the caller's transaction when one of the fence's
     * DataSource is active (it may already hold the fence row's lock), else as {@link #advanceAtGrant}. Every lock
     * wait is bounded by {@code validity}.
     */
    @Override
    public void advanceOnReentry(String resource, FencingToken token, Duration validity) {
        atGrant.advance(target(resource), token, validity, true, () -> advance(resource, token));
    }

    private static FenceAtGrant.Target target(String resource) {
        validateResource(resource);
        return new FenceAtGrant.Target("resource '" + resource + "'", TABLE, CURRENT, resource);
    }

    /**
     * The fence of a resource: the highest token it accepted, empty when nothing was written under a lease yet. Reads
     * with a row lock ({@code FOR UPDATE}) in the caller's transaction, so it sees the latest committed value.
     *
     * @param resource the fenced resource
     * @return the highest token accepted, or empty
     */
    public OptionalLong current(String resource) {
        validateResource(resource);
        List<Long> fences = jdbc.queryForList(READ, Long.class, resource);
        return fences.isEmpty() ? OptionalLong.empty() : OptionalLong.of(fences.get(0));
    }

    /**
     * Writes to a table that carries its own fence column named {@code fence}, one row by its key column. The
     * identifiers are checked once here; values always travel as bind parameters.
     *
     * @param table the table, optionally schema-qualified
     * @param keyColumn the column that identifies a row, usually its primary key
     * @return the fenced table
     * @throws IllegalArgumentException when a name is not a plain SQL identifier
     */
    public FencedTable table(String table, String keyColumn) {
        return table(table, keyColumn, "fence");
    }

    /**
     * Like {@link #table(String, String)} with another fence column name.
     *
     * @param table the table, optionally schema-qualified
     * @param keyColumn the column that identifies a row, usually its primary key
     * @param fenceColumn the {@code BIGINT} column that holds the row's fence
     * @return the fenced table
     * @throws IllegalArgumentException when a name is not a plain SQL identifier
     */
    public FencedTable table(String table, String keyColumn, String fenceColumn) {
        return new FencedTable(jdbc, atGrant, listener, this::boundIdleTime, SqlIdentifiers.table(table, "fenced table"),
                SqlIdentifiers.column(keyColumn, "key column"), SqlIdentifiers.column(fenceColumn, "fence column"));
    }

    /**
     * Creates the {@code lease_fence} table if it does not exist, with the DDL for this database
     * ({@code dev/lease/fence/schema-<platform>.sql}).
     */
    public void createSchema() {
        jdbc.execute(FenceSql.createTable(dialect()));
    }

    /**
     * Checks that the {@code lease_fence} table exists and can be read (no row is read or locked), so that a missing
     * migration shows at startup rather than on the first fenced write.
     *
     * @throws org.springframework.dao.DataAccessException when it cannot
     */
    public void verifySchema() {
        jdbc.queryForList(FenceSql.VERIFY);
    }

    private boolean insertIfAbsent(String resource, long value) {
        SqlDialect d = dialect();
        try {
            return jdbc.update(FenceSql.positional(FenceSql.insertIfAbsent(d)), d.insertBindsKeyAgain()
                    ? new Object[] {resource, value, resource} : new Object[] {resource, value}) > 0;
        }
        catch (DuplicateKeyException ex) {
            // Only on databases where a failed statement leaves the transaction usable (H2, MySQL): PostgreSQL uses
            // ON CONFLICT DO NOTHING and never gets here.
            return false;
        }
    }

    private SqlDialect dialect() {
        SqlDialect d = dialect;
        if (d == null) {
            String product = jdbc.execute((ConnectionCallback<String>) c -> c.getMetaData().getDatabaseProductName());
            d = SqlDialect.forProductName(product).orElseThrow(() -> new IllegalStateException("JdbcFence supports "
                    + "PostgreSQL, MySQL, MariaDB and H2, but the database is '" + product + "'. Check tokens with a "
                    + "fence column in your own table instead (JdbcFence.table)."));
            dialect = d;
        }
        return d;
    }

    static void validateResource(String resource) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("Invalid fenced resource name '" + LeaseNames.printable(resource)
                    + "': it is blank. Name what the write protects, such as 'invoice-42'.");
        }
        if (resource.length() > MAX_RESOURCE_LENGTH) {
            throw new IllegalArgumentException("Invalid fenced resource name '"
                    + LeaseNames.printable(resource.substring(0, 40)) + "...': it is " + resource.length()
                    + " characters long, at most " + MAX_RESOURCE_LENGTH + " are allowed");
        }
        if (!LeaseNames.printable(resource).equals(resource)) {
            throw new IllegalArgumentException("Invalid fenced resource name '" + LeaseNames.printable(resource)
                    + "': it contains control, invisible or bidirectional formatting characters (shown as \\uXXXX)");
        }
    }
}
