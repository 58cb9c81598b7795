package dev.lease.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.InvalidDataAccessResourceUsageException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.ResultSetExtractor;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.util.ClassUtils;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

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
 */
public final class JdbcLeaseBackend implements LeaseBackend<JdbcLeaseBackend.JdbcGrant>, AutoCloseable {

    /** The id used in {@code lease.backend}. */
    public static final String ID = "jdbc";

    /** The default table name. */
    public static final String DEFAULT_TABLE = "lease_lock";

    private static final Log log = LogFactory.getLog(JdbcLeaseBackend.class);

    /** How often a waiter looks at a busy row; the engine's backoff bounds it from above. */
    private static final long POLL_MILLIS = 100;

    /** Bound on any one statement, so a stuck connection fails a call instead of hanging it. */
    private static final int MAX_STATEMENT_SECONDS = 10;

    /**
     * Most grants renewed by one statement: four bind parameters each, far below PostgreSQL's 32767 and MySQL's 65535,
     * and a statement text the servers parse quickly.
     */
    static final int RENEW_CHUNK = 500;

    /** Most idle rows one deleting statement takes, so that it holds few row locks for a short time. */
    static final int IDLE_BATCH = 100;

    /**
     * The name of the shared token counter row. The engine refuses blank lease names, so it can never be a lease's
     * row.
     */
    static final String COUNTER_ROW = "";

    /** Present when the PostgreSQL driver is: releases then notify, and waiters listen. */
    private static final String PG_CONNECTION = "org.postgresql.PGConnection";

    private static final BackendTraits TRAITS = BackendTraits.fenced().withRenewsInOneCall(true);

    private final DataSource dataSource;
    private final String table;
    private final JdbcTemplate jdbc;
    private final Tokens tokens;
    private final Duration deleteIdleAfter;
    private volatile boolean warnedMissingPrivilege;
    private volatile long sweepEveryMillis;
    private Thread sweeper;
    private volatile Statements statements;
    private volatile long pollMillis = POLL_MILLIS;
    private PgReleaseListener listener;
    private boolean closed;
    /**
     * How many characters the table's {@code name} column holds, once read ({@link #verifySchema}, else the first
     * grant); 0 while unknown.
     */
    private volatile int nameColumnLength;

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
        if (deleteIdleAfter != null && tokens != Tokens.SHARED) {
            throw new IllegalArgumentException("lease.jdbc.delete-idle-after is set with per-name tokens: a deleted "
                    + "row would start counting again and reissue tokens fenced resources already accepted; set "
                    + "lease.jdbc.token: shared (once every instance runs with it), or remove "
                    + "lease.jdbc.delete-idle-after");
        }
        if (deleteIdleAfter != null && (deleteIdleAfter.isNegative() || deleteIdleAfter.isZero())) {
            throw new IllegalArgumentException("lease.jdbc.delete-idle-after is " + deleteIdleAfter
                    + ": set a positive duration, such as 1h, or remove it to keep idle rows");
        }
        this.tokens = tokens;
        this.deleteIdleAfter = deleteIdleAfter;
        this.sweepEveryMillis = deleteIdleAfter == null ? 0 : Math.max(1000, Math.min(60_000,
                deleteIdleAfter.toMillis() / 2));
        // A proxy that hands out the thread's transactional connection would have the lease statements commit the
        // caller's transaction halfway (switching it to autocommit does): its target gives connections of their own.
        this.dataSource = dataSource instanceof TransactionAwareDataSourceProxy proxy ? proxy.getTargetDataSource()
                : dataSource;
        this.table = SqlIdentifiers.table(table, "lease.jdbc.table");
        this.jdbc = new JdbcTemplate(this.dataSource);
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
        Statements sql = statements();
        String name = request.name();
        long ttlMillis = millis(request.ttl());
        // The request's attempt id is the owner, so that abandon can find the row this very request may have taken.
        String owner = request.attempt();
        Optional<JdbcGrant> granted = autocommit("grant", ttlMillis, call -> {
            if (nameColumnLength == 0) {
                // Not verified at startup: the name is checked before the first write instead.
                nameColumnLength = call.columnLength("SELECT name FROM " + table + " WHERE 1 = 0");
                validateName(name);
            }
            try {
                if (tokens == Tokens.SHARED) {
                    return Optional.ofNullable(grantShared(call, sql, name, owner, ttlMillis))
                            .map(t -> new JdbcGrant(name, t, owner, ttlMillis));
                }
                if (!(call.update(sql.grant, owner, ttlMillis, name) == 1
                        || (insertRowIfAbsent(call, sql, name) && call.update(sql.grant, owner, ttlMillis, name) == 1))) {
                    return Optional.empty();
                }
            }
            catch (SQLException ex) {
                if (!(translate("grant", sql.grant, ex) instanceof ConcurrencyFailureException)) {
                    throw ex;
                }
                // Another instance was granting the same row at this instant (a lock timeout or serialization
                // failure): busy, which the engine handles by waiting and trying again. A shared grant may have taken
                // the row before its token was set: it is freed, nothing is granted here.
                log.debug("Lease '" + name + "' busy: concurrent grant on " + table + ": " + ex);
                if (tokens == Tokens.SHARED) {
                    call.update(sql.abandon, name, owner);
                }
                return Optional.empty();
            }
            // The owner is this request's own attempt id, so the row still carries it only while the grant is ours:
            // no row means it already expired and was taken (a pause right after the UPDATE), not granted. A failure
            // here propagates, so that the engine abandons the committed grant instead of leaving the row held.
            Long token = call.queryForLong(sql.readToken, name, owner);
            return Optional.ofNullable(token).map(t -> new JdbcGrant(name, t, owner, ttlMillis));
        });
        startSweepingIdleRows();
        return granted;
    }

    /**
     * Takes a free or expired row first, then draws a token from the counter row, then sets it on the row while the row
     * still carries this request as owner: the token of the name's previous holder was set while that holder owned the
     * row, so it was drawn before this take and is lower, whatever was paused, deleted or re-created in between. The
     * reverse order (draw, then take) let a grant that drew early and stalled take a row deleted and re-created
     * meanwhile, and issue a token lower than one already issued for the name. A drawn token can only be lower than the
     * row's when the counter lags the table (a table switched from per-name tokens after the counter was created);
     * the counter is then raised and one more token drawn. The same round trips as before: take, draw, set (which also
     * tells whether the row is still this request's, so no read of the token follows).
     *
     * @return the token, or null when the row is busy (or was taken from this request by a later grant)
     */
    private Long grantShared(Call call, Statements sql, String name, String owner, long ttlMillis)
            throws SQLException {
        if (call.update(sql.take, owner, ttlMillis, name) != 1
                && !(insertSharedRowIfAbsent(call, sql, name) && call.update(sql.take, owner, ttlMillis, name) == 1)) {
            return null;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            long token = drawToken(call, sql);
            if (call.update(sql.setToken, token, name, owner, token) == 1) {
                return token;
            }
            Long current = call.queryForLong(sql.readToken, name, owner);
            if (current == null) {
                // Expired during a pause and taken by a later grant: nothing of this request's left to free.
                return null;
            }
            call.update(sql.raiseCounter, current, COUNTER_ROW, current);
        }
        call.update(sql.abandon, name, owner);
        return null;
    }

    /**
     * Inserts the free row of a name seen for the first time, or again after its idle row was deleted, carrying a
     * token drawn now. Safety does not depend on it (a grant draws its token after taking the row, see
     * {@link #grantShared}); it keeps the row's token near the name's last ones for an instance still on per-name
     * tokens, whose next grant counts on from it.
     */
    private boolean insertSharedRowIfAbsent(Call call, Statements sql, String name) throws SQLException {
        long floor = drawToken(call, sql);
        Object[] args = sql.dialect.insertBindsNameTwice ? new Object[] {name, floor, name}
                : new Object[] {name, floor};
        try {
            return call.update(sql.insertIfAbsentWithToken, args) > 0;
        }
        catch (SQLException ex) {
            if (translate("insert", sql.insertIfAbsentWithToken, ex) instanceof DuplicateKeyException) {
                return false;
            }
            throw ex;
        }
    }

    /** The next shared token, creating the counter row on first use. */
    private long drawToken(Call call, Statements sql) throws SQLException {
        Long token = call.draw(sql);
        if (token == null) {
            Object[] args = sql.dialect.insertCounterBindsNameTwice ? new Object[] {COUNTER_ROW, COUNTER_ROW}
                    : new Object[] {COUNTER_ROW};
            try {
                call.update(sql.insertCounter, args);
            }
            catch (SQLException ex) {
                if (!(translate("insert", sql.insertCounter, ex) instanceof DuplicateKeyException)) {
                    throw ex;
                }
            }
            token = call.draw(sql);
        }
        if (token == null) {
            throw new SQLException("The shared token counter row of " + table + " could not be created");
        }
        return token;
    }

    /**
     * Deletes the rows free (released or expired) for at least {@code delete-idle-after}, except the counter row: a
     * grant sets {@code expires_at} a ttl ahead, so a held or just granted row never matches, and a grant racing the
     * deletion either updates the row first (which then no longer matches) or finds no row and inserts a new one,
     * whose token the shared counter still draws above every earlier one. Does nothing without
     * {@code delete-idle-after}.
     *
     * <p>At most {@value #IDLE_BATCH} rows per statement, each committed on its own, until a statement finds fewer:
     * one statement over every idle row would hold its row locks (on MySQL and MariaDB also on every row it scanned)
     * until it ends, and renewals and grants of the names it touches would wait for it and could lose their leases.
     * The backend calls it on a thread of its own; tests call it directly.
     *
     * @return how many rows were deleted
     */
    int deleteIdleRows() {
        if (deleteIdleAfter == null) {
            return 0;
        }
        Statements sql = statements();
        int deleted = 0;
        int batch;
        do {
            batch = autocommit("deletion of idle rows", MAX_STATEMENT_SECONDS * 1000L,
                    call -> call.update(sql.deleteIdle, COUNTER_ROW, -deleteIdleAfter.toMillis(), IDLE_BATCH));
            deleted += batch;
        }
        while (batch >= IDLE_BATCH && !isClosed());
        return deleted;
    }

    /** How often the background thread deletes idle rows, instead of every half delete-idle-after; tests only. */
    void sweepEvery(Duration every) {
        this.sweepEveryMillis = Math.max(1, every.toMillis());
    }

    /**
     * Starts the thread that deletes idle rows, once, on the first grant: a backend that never grants (a health check
     * only, a test) deletes nothing and starts nothing.
     */
    private synchronized void startSweepingIdleRows() {
        if (deleteIdleAfter == null || sweeper != null || closed) {
            return;
        }
        sweeper = new Thread(this::sweepIdleRows, "lease-jdbc-idle-rows-" + table);
        sweeper.setDaemon(true);
        sweeper.start();
    }

    /** At most once per half {@code delete-idle-after}, once a second at most and once a minute at least. */
    private void sweepIdleRows() {
        while (!isClosed()) {
            try {
                synchronized (this) {
                    // close() notifies, so that the thread ends at once.
                    long deadline = System.nanoTime() + sweepEveryMillis * 1_000_000L;
                    long left;
                    while (!closed && (left = deadline - System.nanoTime()) > 0) {
                        wait(Math.max(1, left / 1_000_000L));
                    }
                    if (closed) {
                        return;
                    }
                }
            }
            catch (InterruptedException ex) {
                return;
            }
            sweepOnce();
        }
    }

    /** One deletion of idle rows, as the background thread makes it; never throws. */
    void sweepOnce() {
        try {
            int deleted = deleteIdleRows();
            if (deleted > 0) {
                log.debug("Deleted " + deleted + " idle lease rows of " + table);
            }
        }
        catch (RuntimeException ex) {
            // Leases are unaffected; the next sweep tries again (the thread must outlive any one failure).
            if (MissingPrivilege.isCause(ex) && !warnedMissingPrivilege) {
                warnedMissingPrivilege = true;
                log.warn("Idle lease rows of " + table + " cannot be deleted: the database user lacks the DELETE "
                        + "privilege on it (" + ex.getMessage() + "). Leases still work, but the rows of names no "
                        + "longer used stay. GRANT DELETE ON " + table + " to the lease user, or remove "
                        + "lease.jdbc.delete-idle-after. Said once; later attempts log at DEBUG.");
            }
            else {
                log.debug("Could not delete idle lease rows of " + table + ": " + ex);
            }
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public boolean renew(JdbcGrant g) {
        Statements sql = statements();
        return autocommit("renew", g.ttlMillis(),
                call -> call.update(sql.renew, g.ttlMillis(), g.name(), g.owner(), g.value()) == 1
                        // 0 rows is not yet a loss: a renewal that sets the same expires_at (within the same
                        // microsecond) changes nothing, and drivers counting changed rows rather than matched ones
                        // (MySQL's useAffectedRows=true) report 0 for it.
                        || Long.valueOf(1).equals(call.queryForLong(sql.held, g.name(), g.owner(), g.value())));
    }

    /**
     * Renews a batch in one {@code UPDATE} per distinct ttl (and per {@value #RENEW_CHUNK} grants, to stay far below
     * every database's bind-parameter limit), all on one connection. Only when a statement's update count falls short
     * of its grants does one {@code SELECT} tell which of them are still held: the rest are lost. A short count is not
     * yet a loss for the same reason as in {@link #renew}: a driver counting changed rather than matched rows reports
     * a renewal that set the same {@code expires_at} as unchanged.
     */
    @Override
    public Set<JdbcGrant> renewAll(Collection<JdbcGrant> grants) {
        if (grants.isEmpty()) {
            return Set.of();
        }
        Statements sql = statements();
        Map<Long, List<JdbcGrant>> byTtl = new LinkedHashMap<>();
        for (JdbcGrant g : grants) {
            byTtl.computeIfAbsent(g.ttlMillis(), ttl -> new ArrayList<>()).add(g);
        }
        long shortestTtl = byTtl.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
        return autocommit("renewal of " + grants.size() + " leases", shortestTtl, call -> {
            Set<JdbcGrant> lost = new HashSet<>();
            for (Map.Entry<Long, List<JdbcGrant>> group : byTtl.entrySet()) {
                List<JdbcGrant> all = group.getValue();
                for (int from = 0; from < all.size(); from += RENEW_CHUNK) {
                    List<JdbcGrant> chunk = all.subList(from, Math.min(all.size(), from + RENEW_CHUNK));
                    lost.addAll(renewChunk(call, sql, group.getKey(), chunk));
                }
            }
            return lost;
        });
    }

    private List<JdbcGrant> renewChunk(Call call, Statements sql, long ttlMillis, List<JdbcGrant> chunk)
            throws SQLException {
        String matching = sql.grantsMatching(chunk.size());
        Object[] grantArgs = grantArgs(chunk);
        Object[] updateArgs = new Object[grantArgs.length + 1];
        updateArgs[0] = ttlMillis;
        System.arraycopy(grantArgs, 0, updateArgs, 1, grantArgs.length);
        int renewed = call.update("UPDATE " + table + " SET expires_at = " + sql.dialect.nowPlusMillis + " WHERE "
                + matching + " AND expires_at > " + sql.dialect.now, updateArgs);
        if (renewed >= chunk.size()) {
            return List.of();
        }
        Set<HeldRow> held = call.queryHeld("SELECT name, owner, token FROM " + table + " WHERE " + matching
                + " AND expires_at > " + sql.dialect.now, grantArgs);
        List<JdbcGrant> lost = new ArrayList<>();
        for (JdbcGrant g : chunk) {
            if (!held.contains(new HeldRow(g.name(), g.owner(), g.value()))) {
                lost.add(g);
            }
        }
        return lost;
    }

    /** The names first (one {@code IN} list the primary key index answers), then each grant's triple. */
    private static Object[] grantArgs(List<JdbcGrant> chunk) {
        Object[] args = new Object[chunk.size() * 4];
        for (int i = 0; i < chunk.size(); i++) {
            JdbcGrant g = chunk.get(i);
            args[i] = g.name();
            args[chunk.size() + 3 * i] = g.name();
            args[chunk.size() + 3 * i + 1] = g.owner();
            args[chunk.size() + 3 * i + 2] = g.value();
        }
        return args;
    }

    /** On PostgreSQL the same statement notifies the table's channel, when it released the row, at its commit. */
    @Override
    public void release(JdbcGrant g) {
        Statements sql = statements();
        if (sql.releaseAndNotify != null) {
            autocommit("release", g.ttlMillis(), call -> call.execute(sql.releaseAndNotify, g.name(), g.owner(),
                    g.value(), sql.channel));
            return;
        }
        autocommit("release", g.ttlMillis(), call -> call.update(sql.release, g.name(), g.owner(), g.value()));
    }

    /**
     * Frees the row if it still carries the request's attempt id as owner: the grant may have been committed although
     * its answer never came back (a lost connection, a timeout, an interrupt).
     */
    @Override
    public void abandon(GrantRequest request) {
        Statements sql = statements();
        long ttlMillis = millis(request.ttl());
        autocommit("abandon", ttlMillis, call -> call.update(sql.abandon, request.name(), request.attempt()));
    }

    /**
     * Polls, as no notification exists in plain SQL: at most every 100 ms, bounded by the engine's backoff. On
     * PostgreSQL a release by any instance also wakes the waiter at once: one thread per backend listens for releases
     * on a connection of its own, opened on the first wait and closed with the backend. The poll stays, for expiries
     * (which nobody notifies) and for whenever that connection is down.
     */
    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        long millis = Math.max(1, Math.min(pollMillis, maxWait.toMillis()));
        PgReleaseListener releases = releaseListener();
        if (releases != null && releases.listening()) {
            releases.await(name, millis);
        }
        else {
            Thread.sleep(millis);
        }
    }

    /** The longest a waiter waits before it looks at the row again, notified or not; 100 ms unless a test says so. */
    void pollInterval(Duration interval) {
        this.pollMillis = Math.max(1, interval.toMillis());
    }

    /** Whether this backend is listening for releases now (PostgreSQL only, once someone waited). */
    boolean listeningForReleases() {
        PgReleaseListener releases;
        synchronized (this) {
            releases = listener;
        }
        return releases != null && releases.listening();
    }

    private synchronized PgReleaseListener releaseListener() {
        if (listener == null && !closed && statements().channel != null) {
            listener = new PgReleaseListener(dataSource, table);
        }
        return listener;
    }

    /**
     * Stops listening for releases, if this backend was, and deleting idle rows; grants, renewals and releases still
     * work afterwards.
     */
    @Override
    public void close() {
        PgReleaseListener releases;
        Thread sweeping;
        synchronized (this) {
            closed = true;
            releases = listener;
            listener = null;
            sweeping = sweeper;
            notifyAll();
        }
        if (releases != null) {
            releases.close();
        }
        if (sweeping != null) {
            try {
                // A deletion in progress ends within its statement timeout.
                sweeping.join(TimeUnit.SECONDS.toMillis(MAX_STATEMENT_SECONDS + 1));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether the thread deleting idle rows runs; tests only. */
    boolean sweepingIdleRows() {
        Thread sweeping;
        synchronized (this) {
            sweeping = sweeper;
        }
        return sweeping != null && sweeping.isAlive();
    }

    /**
     * Creates the lease table if it does not exist, with the DDL for this database
     * ({@code dev/lease/jdbc/schema-<platform>.sql}).
     */
    public void createSchema() {
        Dialect dialect = statements().dialect;
        String script = "dev/lease/jdbc/schema-" + dialect.platform + ".sql";
        String ddl = SqlPlatforms.readStatement(script).replace("${table}", table);
        jdbc.execute(ddl);
        if (deleteIdleAfter != null) {
            createExpiryIndex(dialect);
        }
        log.info("Lease table " + table + " is ready (" + script + ")");
    }

    /**
     * The index the deletion of idle rows finds them by; H2 names an index within the table's schema, PostgreSQL and
     * MySQL take the bare name and put it there themselves.
     */
    private void createExpiryIndex(Dialect dialect) {
        String bare = table.substring(table.lastIndexOf('.') + 1);
        String index = (dialect == Dialect.H2 ? table : bare) + "_expires_at";
        String ddl = SqlPlatforms.readStatement("dev/lease/jdbc/index-" + dialect.platform + ".sql")
                .replace("${index}", index).replace("${table}", table);
        try {
            jdbc.execute(ddl);
        }
        catch (DataAccessException ex) {
            // MySQL's "Duplicate key name": the index exists already.
            if (!(ex.getMostSpecificCause() instanceof SQLException sql && sql.getErrorCode() == 1061)) {
                throw ex;
            }
        }
    }

    /**
     * Checks that the lease table exists and can be read, so that a missing migration or an unreachable database
     * shows at startup rather than on the first lease; on MySQL and MariaDB also that {@code expires_at} is not a
     * {@code TIMESTAMP} (the type shipped before, which daylight saving changes get wrong).
     *
     * @throws org.springframework.dao.DataAccessException when it cannot
     */
    public void verifySchema() {
        String expiresAtType = jdbc.query("SELECT name, owner, token, expires_at FROM " + table + " WHERE 1 = 0",
                (ResultSetExtractor<String>) rows -> {
                    nameColumnLength = lengthOrUnbounded(rows.getMetaData().getPrecision(1));
                    return rows.getMetaData().getColumnTypeName(4);
                });
        if (statements().dialect == Dialect.MYSQL && "TIMESTAMP".equalsIgnoreCase(expiresAtType)) {
            throw new InvalidDataAccessResourceUsageException(table + ".expires_at is a TIMESTAMP, which MySQL and "
                    + "MariaDB convert through the session time zone, so around a daylight saving change a lease would "
                    + "be stored an hour off; the lease SQL writes UTC into a DATETIME(6). Convert it while no lease is "
                    + "held, on a UTC session: SET time_zone = '+00:00'; ALTER TABLE " + table
                    + " MODIFY expires_at DATETIME(6) NOT NULL");
        }
    }

    /**
     * Refuses a name longer than the table's {@code name} column holds (the shipped DDL makes it 255 characters, more
     * than any lease name; a table of the application's own may hold fewer): the database would refuse the grant.
     * The column's length is read once, by {@link #verifySchema} (at startup) or else by the first grant, before it
     * writes; until then this refuses nothing, so that it never waits for the database outside a grant's deadline.
     */
    @Override
    public void validateName(String name) {
        int max = nameColumnLength;
        if (max == 0) {
            return;
        }
        int length = name.codePointCount(0, name.length());
        if (length > max) {
            throw new IllegalArgumentException("Invalid lease name '" + name + "' for the jdbc backend: it is " + length
                    + " characters long, and the name column of the lease table " + table + " holds at most " + max
                    + ". Use a shorter lease name, or widen " + table + ".name (the shipped DDL makes it VARCHAR(255))");
        }
    }

    /** A column's precision as the driver reports it; 0 (not reported) counts as unbounded. */
    private static int lengthOrUnbounded(int precision) {
        return precision > 0 ? precision : Integer.MAX_VALUE;
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
        String probe = "SELECT name, owner, token, expires_at FROM " + table + " WHERE 1 = 0";
        try {
            autocommit("health check", Math.max(1, timeout.toMillis()), call -> call.queryForLong(probe));
        }
        catch (DataAccessException ex) {
            throw new IllegalStateException("The lease table " + table + " cannot be read: " + ex.getMessage(), ex);
        }
        return Map.of("table", table);
    }

    /**
     * Inserts the free row of a name seen for the first time, or again after its row was deleted, carrying the shared
     * token counter's value (0 without one), read by the inserting statement itself with a lookup by key: a row
     * deleted under shared tokens issued tokens up to that at most, and the first grant of the new row must lie above
     * them (with 0, an instance still or again on per-name tokens would hand out 1 for a name that already had 9000).
     * Not the table's highest token: that would scan the whole table, and lock it on MySQL, for every new name. True when
     * this call inserted the row. The statement never fails on an existing row, except for H2's race between two
     * first inserts.
     */
    private boolean insertRowIfAbsent(Call call, Statements sql, String name) throws SQLException {
        Object[] args = sql.dialect.insertCounterBindsNameTwice ? new Object[] {name, name} : new Object[] {name};
        try {
            return call.update(sql.insertIfAbsent, args) > 0;
        }
        catch (SQLException ex) {
            if (translate("insert", sql.insertIfAbsent, ex) instanceof DuplicateKeyException) {
                return false;
            }
            throw ex;
        }
    }

    /**
     * Runs one call's statements on a connection of its own, each committed by the database as it executes; a
     * connection the pool hands out with autocommit off is switched for the call and back.
     */
    private <T> T autocommit(String task, long ttlMillis, Work<T> work) {
        int timeoutSeconds = (int) Math.max(1, Math.min(MAX_STATEMENT_SECONDS, (ttlMillis + 999) / 1000));
        Connection connection;
        try {
            connection = dataSource.getConnection();
        }
        catch (SQLException ex) {
            throw translate(task + " on " + table, null, ex);
        }
        boolean switched = false;
        try {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
                switched = true;
            }
            return work.run(new Call(connection, timeoutSeconds));
        }
        catch (SQLException ex) {
            throw translate(task + " on " + table, null, ex);
        }
        finally {
            giveBack(connection, switched);
        }
    }

    /**
     * Every statement was committed as it ran, so nothing that fails here changes the call's outcome: a renewal that
     * succeeded stays a success, a grant that committed stays granted.
     */
    private void giveBack(Connection connection, boolean switched) {
        try {
            if (switched) {
                connection.setAutoCommit(false);
            }
        }
        catch (SQLException ex) {
            log.debug("Could not switch a connection of " + table + " back to autocommit off: " + ex);
        }
        try {
            connection.close();
        }
        catch (SQLException ex) {
            log.debug("Could not close a connection of " + table + ": " + ex);
        }
    }

    private DataAccessException translate(String task, String sql, SQLException ex) {
        DataAccessException translated = jdbc.getExceptionTranslator().translate(task, sql, ex);
        return translated != null ? translated
                : new UncategorizedSQLException(task, sql, ex);
    }

    private Statements statements() {
        Statements s = statements;
        if (s == null) {
            synchronized (this) {
                s = statements;
                if (s == null) {
                    s = new Statements(detectDialect(), table, ClassUtils.isPresent(PG_CONNECTION,
                            JdbcLeaseBackend.class.getClassLoader()));
                    statements = s;
                }
            }
        }
        return s;
    }

    private Dialect detectDialect() {
        try {
            String product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
            return Dialect.forProductName(product);
        }
        catch (MetaDataAccessException ex) {
            throw new IllegalStateException("Could not tell which database the JDBC lease backend runs on: " + ex, ex);
        }
    }

    private static long millis(Duration ttl) {
        return Math.max(1, ttl.toMillis());
    }

    @Override
    public String toString() {
        return "JdbcLeaseBackend[" + table + "]";
    }

    /** The SQL of one table on one database, built once from validated parts. */
    private static final class Statements {

        final Dialect dialect;
        final String grant;
        final String readToken;
        final String renew;
        final String held;
        final String release;
        final String abandon;
        final String insertIfAbsent;
        final String insertIfAbsentWithToken;
        final String take;
        final String setToken;
        final String raiseCounter;
        final String drawToken;
        final String insertCounter;
        final String deleteIdle;

        /** Releases and notifies the channel in one statement; null but on PostgreSQL with its driver. */
        final String releaseAndNotify;

        /** The channel releases are notified on; null but on PostgreSQL with its driver. */
        final String channel;

        Statements(Dialect dialect, String table, boolean pgDriver) {
            this.dialect = dialect;
            this.grant = "UPDATE " + table + " SET owner = ?, token = token + 1, expires_at = " + dialect.nowPlusMillis
                    + " WHERE name = ? AND (owner IS NULL OR expires_at <= " + dialect.now + ")";
            this.readToken = "SELECT token FROM " + table + " WHERE name = ? AND owner = ?";
            this.renew = "UPDATE " + table + " SET expires_at = " + dialect.nowPlusMillis
                    + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + dialect.now;
            this.held = "SELECT COUNT(*) FROM " + table
                    + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + dialect.now;
            this.release = "UPDATE " + table + " SET owner = NULL, expires_at = " + dialect.now
                    + " WHERE name = ? AND owner = ? AND token = ?";
            this.abandon = "UPDATE " + table + " SET owner = NULL, expires_at = " + dialect.now
                    + " WHERE name = ? AND owner = ?";
            this.insertIfAbsent = String.format(dialect.insertCounter, table, "name = '" + COUNTER_ROW + "'");
            this.insertIfAbsentWithToken = String.format(dialect.insertIfAbsent, table, "?");
            this.take = "UPDATE " + table + " SET owner = ?, expires_at = " + dialect.nowPlusMillis
                    + " WHERE name = ? AND (owner IS NULL OR expires_at <= " + dialect.now + ")";
            // The owner (the request's own attempt id) is this grant's until a later grant takes the row over.
            this.setToken = "UPDATE " + table + " SET token = ? WHERE name = ? AND owner = ? AND token < ?";
            this.raiseCounter = "UPDATE " + table + " SET token = ? WHERE name = ? AND token < ?";
            this.drawToken = String.format(dialect.drawToken, table);
            this.insertCounter = String.format(dialect.insertCounter, table, "1 = 1");
            boolean notifies = dialect == Dialect.POSTGRESQL && pgDriver;
            this.channel = notifies ? PgReleaseListener.channel(table) : null;
            this.releaseAndNotify = notifies ? "WITH released AS (UPDATE " + table + " SET owner = NULL, expires_at = "
                    + dialect.now + " WHERE name = ? AND owner = ? AND token = ? RETURNING name)"
                    + " SELECT pg_notify(?, name) FROM released" : null;
            // Binds the counter row's name, the (negative) idle time, and the batch size.
            this.deleteIdle = String.format(dialect.deleteIdle, table, "name <> ? AND expires_at <= "
                    + dialect.nowPlusMillis);
        }

        /**
         * The rows of {@code count} grants: {@code name IN (...)} lets every database look them up by primary key,
         * the OR-chain of bound (name, owner, token) triples (understood by every supported database, unlike row
         * values on some) keeps only the rows still carrying a grant. Binds the names, then the triples.
         */
        String grantsMatching(int count) {
            StringBuilder sql = new StringBuilder(count * 48).append("name IN (");
            for (int i = 0; i < count; i++) {
                sql.append(i == 0 ? "?" : ", ?");
            }
            sql.append(") AND (");
            for (int i = 0; i < count; i++) {
                sql.append(i == 0 ? "" : " OR ").append("(name = ? AND owner = ? AND token = ?)");
            }
            return sql.append(')').toString();
        }
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(Call call) throws SQLException;
    }

    /** The statements of one call, on one connection in autocommit mode, each bounded by the same timeout. */
    private record Call(Connection connection, int timeoutSeconds) {

        int update(String sql, Object... args) throws SQLException {
            try (PreparedStatement statement = prepare(sql, args)) {
                return statement.executeUpdate();
            }
        }

        /** Runs a statement whatever it returns. */
        boolean execute(String sql, Object... args) throws SQLException {
            try (PreparedStatement statement = prepare(sql, args)) {
                return statement.execute();
            }
        }

        /** The counter row's next value, or null when there is no counter row yet. */
        Long draw(Statements sql) throws SQLException {
            if (sql.dialect.readDrawnToken == null) {
                return queryForLong(sql.drawToken, COUNTER_ROW);
            }
            return update(sql.drawToken, COUNTER_ROW) == 0 ? null : queryForLong(sql.dialect.readDrawnToken);
        }

        /** The (name, owner, token) rows a query returns. */
        Set<HeldRow> queryHeld(String sql, Object... args) throws SQLException {
            Set<HeldRow> rows = new HashSet<>();
            try (PreparedStatement statement = prepare(sql, args); ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    rows.add(new HeldRow(result.getString(1), result.getString(2), result.getLong(3)));
                }
            }
            return rows;
        }

        /** How many characters the first column of a query's result holds, as {@link #lengthOrUnbounded} counts. */
        int columnLength(String sql) throws SQLException {
            try (PreparedStatement statement = prepare(sql); ResultSet rows = statement.executeQuery()) {
                return lengthOrUnbounded(rows.getMetaData().getPrecision(1));
            }
        }

        /** The first column of the first row as a number, or null without a row. */
        Long queryForLong(String sql, Object... args) throws SQLException {
            try (PreparedStatement statement = prepare(sql, args); ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getLong(1) : null;
            }
        }

        private PreparedStatement prepare(String sql, Object... args) throws SQLException {
            PreparedStatement statement = connection.prepareStatement(sql);
            try {
                statement.setQueryTimeout(timeoutSeconds);
                for (int i = 0; i < args.length; i++) {
                    statement.setObject(i + 1, args[i]);
                }
                return statement;
            }
            catch (SQLException ex) {
                statement.close();
                throw ex;
            }
        }
    }

    /** A row as a batch renewal reads it back. */
    private record HeldRow(String name, String owner, long token) {
    }

    record JdbcGrant(String name, long value, String owner, long ttlMillis) implements Grant {

        @Override
        public OptionalLong token() {
            return OptionalLong.of(value);
        }
    }
}
