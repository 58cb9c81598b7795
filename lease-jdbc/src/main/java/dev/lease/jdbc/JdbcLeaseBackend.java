package dev.lease.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.IdleDeletion;
import dev.lease.spi.LeaseBackend;
import dev.lease.sql.SqlIdentifiers;

/**
 * Fenced leases kept in a table of the database the application already runs (PostgreSQL, MySQL, MariaDB, H2).
 *
 * <p>One row per lease name, {@code (name, owner, token, expires_at)}, never deleted. A grant is one conditional
 * {@code UPDATE} that takes a free or expired row, increments {@code token} (the fencing token) and sets
 * {@code expires_at} from the database clock; renew and release only touch a row that still carries the grant's
 * owner and token. Expiry is decided by the database's clock alone ({@code CURRENT_TIMESTAMP}, on MySQL and MariaDB
 * {@code UTC_TIMESTAMP}): this class reads no JVM clock and sends no time to the database, only ttls in milliseconds.
 *
 * <p>Every statement runs on its own, in autocommit mode, on a connection taken from the DataSource for the call
 * alone: lease bookkeeping never joins, and is never rolled back with, a business transaction running on the same
 * thread and DataSource. No lease statement ever runs inside a transaction that spans a round trip: a holder that
 * stalls (a process pause, a network that stops answering) right after the database executed its statement could
 * otherwise keep the lease row locked until the server drops its connection, and nobody could take over.
 *
 * <p>This class is the façade; its rooms are the lease table's statements ({@link LeaseStatements}), the calls on
 * connections of their own ({@link Autocommit}), the shared token counter ({@link TokenCounter}), the batch renewal
 * ({@link BatchRenewal}), the waits for a release ({@link ReleaseWaits}, on PostgreSQL with {@link PgReleaseListener}),
 * the deletion of idle rows ({@link IdleRowSweeper}) and the schema ({@link LeaseSchema}).
 */
public final class JdbcLeaseBackend implements LeaseBackend<JdbcLeaseBackend.JdbcGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "jdbc";

    /** The default table name. */
    public static final String DEFAULT_TABLE = "lease_lock";

    private static final Log log = LogFactory.getLog(JdbcLeaseBackend.class);

    private static final BackendTraits TRAITS = BackendTraits.fenced().withRenewsInOneCall(true);

    private static final IdleDeletion IDLE_ROWS = new IdleDeletion("lease.jdbc", Tokens.SHARED,
            "a deleted row would count its tokens from 1 again and reissue tokens that fenced resources already "
                    + "accepted", "rows");

    private final DataSource dataSource;
    private final String table;
    private final Tokens tokens;
    private final Autocommit calls;
    private final BatchRenewal renewal;
    private final ReleaseWaits releases;
    private final IdleRowSweeper idleRows;
    private final LeaseSchema schema;
    private volatile LeaseStatements statements;

    /** Where fencing tokens come from. */
    public enum Tokens {

        /**
         * Each name's row counts its own grants ({@code token = token + 1}). Rows are never deleted: a deleted row
         * would start again at 1 and reissue tokens a fenced resource has already accepted.
         */
        PER_NAME,

        /**
         * Every grant of every name draws the next value of one counter row of the table, so tokens keep rising
         * across the deletion and re-creation of a name's row and idle rows may be deleted. A grant takes the row,
         * then draws, then sets the drawn token on the row it holds: one more statement per grant.
         */
        SHARED
    }

    /** A backend over {@code dataSource} using the table {@value #DEFAULT_TABLE}. */
    public JdbcLeaseBackend(DataSource dataSource) {
        this(dataSource, DEFAULT_TABLE);
    }

    /**
     * @param dataSource where the lease table lives
     * @param table the lease table, a plain identifier, optionally schema-qualified
     * @throws IllegalArgumentException when {@code table} is not a plain SQL identifier
     */
    public JdbcLeaseBackend(DataSource dataSource, String table) {
        this(dataSource, table, Tokens.PER_NAME, null);
    }

    /**
     * @param dataSource where the lease table lives
     * @param table the lease table, a plain identifier, optionally schema-qualified
     * @param tokens where fencing tokens come from
     * @param deleteIdleAfter how long a row must have been free before it is deleted; null never deletes rows
     * @throws IllegalArgumentException when {@code table} is not a plain SQL identifier, or rows would be deleted with
     *         per-name tokens
     */
    public JdbcLeaseBackend(DataSource dataSource, String table, Tokens tokens, Duration deleteIdleAfter) {
        IDLE_ROWS.check(deleteIdleAfter, tokens);
        this.tokens = tokens;
        // A proxy that hands out the thread's transactional connection would have the lease statements commit the
        // caller's transaction halfway (switching it to autocommit does): its target gives connections of their own.
        this.dataSource = dataSource instanceof TransactionAwareDataSourceProxy proxy ? proxy.getTargetDataSource()
                : dataSource;
        this.table = SqlIdentifiers.table(table, "lease.jdbc.table");
        this.calls = new Autocommit(new JdbcTemplate(this.dataSource), this.table);
        this.renewal = new BatchRenewal(calls, this::statements);
        this.releases = new ReleaseWaits(this.dataSource, this::statements);
        this.idleRows = new IdleRowSweeper(calls, this::statements, this.table, deleteIdleAfter);
        this.schema = new LeaseSchema(calls, () -> statements().dialect, idleRows.deletes());
    }

    @Override
    public String id() {
        return ID;
    }

    /** Fenced. One {@link #renewAll} call confirms a whole batch: one statement per ttl and per few hundred grants. */
    @Override
    public BackendTraits traits() {
        return TRAITS;
    }

    /** The lease table's name. */
    public String table() {
        return table;
    }

    @Override
    public Optional<JdbcGrant> tryAcquire(GrantRequest request) {
        LeaseStatements sql = statements();
        String name = request.name();
        long ttlMillis = millis(request.ttl());
        // The request's attempt id is the owner, so that abandon can find the row this very request may have taken.
        String owner = request.attempt();
        Optional<JdbcGrant> granted = calls.run("grant", ttlMillis, call -> {
            // Not verified at startup: the name is checked before the first write instead.
            schema.checkNameBeforeFirstWrite(call, name);
            try {
                if (tokens == Tokens.SHARED) {
                    return Optional.ofNullable(TokenCounter.grant(call, sql, name, owner, ttlMillis))
                            .map(t -> new JdbcGrant(name, t, owner, ttlMillis));
                }
                if (!(call.update(sql.grant, owner, ttlMillis, name) == 1
                        || (TokenCounter.insertPerNameRowIfAbsent(call, sql, name)
                                && call.update(sql.grant, owner, ttlMillis, name) == 1))) {
                    return Optional.empty();
                }
            }
            catch (SQLException ex) {
                if (!call.failedWith(ConcurrencyFailureException.class, "grant", sql.grant, ex)) {
                    throw ex;
                }
                // Another instance was granting the same row at this instant (a lock timeout, or a deadlock that
                // outlasted Call's retries): busy, which the engine handles by waiting and trying again. A shared
                // grant may have taken the row before its token was set: it is freed, nothing is granted here.
                log.debug("Lease '" + name + "' busy: concurrent grant on " + table + ": " + ex);
                if (tokens == Tokens.SHARED) {
                    TokenCounter.free(call, sql, name, owner);
                }
                return Optional.empty();
            }
            // The owner is this request's own attempt id, so the row still carries it only while the grant is ours:
            // no row means it already expired and was taken (a pause right after the UPDATE), not granted. A failure
            // here propagates, so that the engine abandons the committed grant instead of leaving the row held.
            Long token = call.queryForLong(sql.readToken, name, owner);
            return Optional.ofNullable(token).map(t -> new JdbcGrant(name, t, owner, ttlMillis));
        });
        idleRows.start();
        return granted;
    }

    @Override
    public boolean renew(JdbcGrant g) {
        LeaseStatements sql = statements();
        return calls.run("renew", g.ttlMillis(),
                call -> call.update(sql.renew, g.ttlMillis(), g.name(), g.owner(), g.value()) == 1
                        // 0 rows is not yet a loss: a renewal that sets the same expires_at (within the same
                        // microsecond) changes nothing, and drivers counting changed rows rather than matched ones
                        // (MySQL's useAffectedRows=true) report 0 for it.
                        || Long.valueOf(1).equals(call.queryForLong(sql.held, g.name(), g.owner(), g.value())));
    }

    /** In one statement per distinct ttl and per few hundred grants, as {@link BatchRenewal} tells. */
    @Override
    public Set<JdbcGrant> renewAll(Collection<JdbcGrant> grants) {
        return renewal.renewAll(grants);
    }

    /** On PostgreSQL the same statement notifies the table's channel, when it released the row, at its commit. */
    @Override
    public void release(JdbcGrant g) {
        LeaseStatements sql = statements();
        if (sql.releaseAndNotify != null) {
            calls.run("release", g.ttlMillis(), call -> call.execute(sql.releaseAndNotify, g.name(), g.owner(),
                    g.value(), sql.channel));
            return;
        }
        calls.run("release", g.ttlMillis(), call -> call.update(sql.release, g.name(), g.owner(), g.value()));
    }

    /**
     * Frees the row if it still carries the request's attempt id as owner: the grant may have been committed although
     * its answer never came back (a lost connection, a timeout, an interrupt).
     */
    @Override
    public void abandon(GrantRequest request) {
        LeaseStatements sql = statements();
        long ttlMillis = millis(request.ttl());
        calls.run("abandon", ttlMillis, call -> call.update(sql.abandon, request.name(), request.attempt()));
    }

    /** Polls, and on PostgreSQL with its driver also listens for releases, as {@link ReleaseWaits} tells. */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        releases.await(name, maxWait);
    }

    /**
     * Stops listening for releases, if this backend was, and deleting idle rows; grants, renewals and releases still
     * work afterwards.
     */
    @Override
    public void close() {
        idleRows.stop();
        releases.close();
        idleRows.awaitStopped();
    }

    /**
     * Creates the lease table if it does not exist, with the DDL for this database
     * ({@code dev/lease/jdbc/schema-<platform>.sql}).
     */
    public void createSchema() {
        schema.create();
    }

    /**
     * Checks that the lease table exists and can be read, so that a missing migration or an unreachable database
     * shows at startup rather than on the first lease; on MySQL and MariaDB also that {@code expires_at} is not a
     * {@code TIMESTAMP} (the type shipped before, which daylight saving changes get wrong).
     *
     * @throws org.springframework.dao.DataAccessException when it cannot
     */
    public void verifySchema() {
        schema.verify();
    }

    /**
     * Refuses a name longer than the table's {@code name} column holds (the shipped DDL makes it 255 characters, more
     * than any lease name; a table of the application's own may hold fewer): the database would refuse the grant.
     * The column's length is read once, by {@link #verifySchema} (at startup) or else by the first grant, before it
     * writes; until then this refuses nothing, so that it never waits for the database outside a grant's deadline.
     */
    @Override
    public void validateName(String name) {
        schema.validateName(name);
    }

    /**
     * Reads the lease table without taking a row ({@code WHERE 1 = 0}), on a connection of its own, with a query
     * timeout of {@code timeout} rounded up to whole seconds (at least one, at most the backend's usual bound): a
     * reachable database with the table and its columns is what every grant, renewal and release needs.
     *
     * @return the lease table's name
     * @throws IllegalStateException when the database cannot be reached or the table cannot be read, with the cause
     */
    @Override
    public Map<String, Object> checkHealth(Duration timeout) {
        return schema.checkHealth(timeout);
    }

    /** The longest a waiter waits before it looks at the row again, notified or not; tests only. */
    void pollInterval(Duration interval) {
        releases.pollInterval(interval);
    }

    /** Whether this backend is listening for releases now (PostgreSQL only, once someone waited). */
    boolean listeningForReleases() {
        return releases.listening();
    }

    /** Deletes idle rows now, as {@link IdleRowSweeper#deleteIdleRows} tells; tests only. */
    int deleteIdleRows() {
        return idleRows.deleteIdleRows();
    }

    /** How often the background thread deletes idle rows, instead of every half delete-idle-after; tests only. */
    void sweepEvery(Duration every) {
        idleRows.sweepEvery(every);
    }

    /** One deletion of idle rows, as the background thread makes it; never throws. */
    void sweepOnce() {
        idleRows.sweepOnce();
    }

    /** Whether the thread deleting idle rows runs; tests only. */
    boolean sweepingIdleRows() {
        return idleRows.running();
    }

    private LeaseStatements statements() {
        LeaseStatements s = statements;
        if (s == null) {
            synchronized (this) {
                s = statements;
                if (s == null) {
                    s = LeaseStatements.of(dataSource, table);
                    statements = s;
                }
            }
        }
        return s;
    }

    private static long millis(Duration ttl) {
        return Math.max(1, ttl.toMillis());
    }

    @Override
    public String toString() {
        return "JdbcLeaseBackend[" + table + "]";
    }

    record JdbcGrant(String name, long value, String owner, long ttlMillis) implements Grant {

        @Override
        public OptionalLong token() {
            return OptionalLong.of(value);
        }
    }
}
