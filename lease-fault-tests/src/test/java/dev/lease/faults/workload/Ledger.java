package dev.lease.faults.workload;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.mutants.Mutant;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.TestTiming;

/**
 * The protected resource of a fault scenario: a table that logs every write it accepts, in commit order, each in
 * one transaction with the library's {@link JdbcFence} ({@link Check#FENCED}). {@link Check#BROKEN} moves the
 * fence without comparing tokens, to prove the checker notices; it is also the honest model of an EFFICIENCY
 * lease's resource, which has no token to compare.
 */
public final class Ledger {

    /**
     * How long a writer's fenced transaction may sit idle: a holder SIGSTOPped inside it loses its session after that
     * long, rather than blocking its successors' fence at grant until it is resumed. A few of the suite's ttls; the
     * workers' own transactions never idle that long.
     */
    static final Duration IDLE_TIMEOUT = TestTiming.seconds(3);

    public enum Check { FENCED, BROKEN }

    /**
     * Writes of a ledger that go elsewhere than through {@link JdbcFence} on this JVM's connection: through a fenced
     * JPA entity ({@link JpaLedgerWrites}) or a fenced call to a service ({@link HttpLedgerWrites}). Both take the
     * token from the lease bound to the writing thread, as an application's code does, and log the write in
     * {@code fault_ledger} in the fence's transaction.
     */
    interface Writes {

        /** Writes under the lease bound to this thread; false when the fence refused its token. */
        boolean write(long token, long writeId);
    }

    private volatile java.util.function.LongConsumer locked = token -> { };
    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final JdbcFence fence;
    private final Check check;
    private final String resource;
    /** Where writes go instead of the plain JdbcFence writes ({@link #jpa}, {@link #http}, {@link #r2dbc}); or null. */
    private final Writes writes;

    /** A fresh ledger for {@code resource}: creates the tables if needed and forgets earlier writes. */
    public Ledger(DataSource dataSource, Check check, String resource) {
        this(dataSource, check, resource, true, null);
    }

    /**
     * A fresh ledger for {@code resource} written through a fenced JPA entity ({@link JpaLedgerWrites}) on the
     * database at {@code jdbcUrl}, the one {@code dataSource} reaches: the fence is the entity's column.
     */
    public static Ledger jpa(DataSource dataSource, String jdbcUrl, String resource) {
        return jpa(dataSource, jdbcUrl, resource, JpaLedgerWrites.Shape.ROW);
    }

    /**
     * Like {@link #jpa(DataSource, String, String)}, each write changing only the entity's element collection: the
     * fence is the owner's column all the same.
     */
    public static Ledger jpaCollection(DataSource dataSource, String jdbcUrl, String resource) {
        return jpa(dataSource, jdbcUrl, resource, JpaLedgerWrites.Shape.COLLECTION);
    }

    /**
     * Like {@link #jpa(DataSource, String, String)}, each write inserting the entity and deleting it again: a stale
     * write inserts an id a newer token deleted, and the fence is the tombstone that delete left.
     */
    public static Ledger jpaInsertThenDelete(DataSource dataSource, String jdbcUrl, String resource) {
        return jpa(dataSource, jdbcUrl, resource, JpaLedgerWrites.Shape.INSERT_THEN_DELETE);
    }

    private static Ledger jpa(DataSource dataSource, String jdbcUrl, String resource, JpaLedgerWrites.Shape shape) {
        return new Ledger(dataSource, Check.FENCED, resource, true, jdbc -> {
            JpaLedgerWrites.reset(jdbc, resource, shape);
            return new JpaLedgerWrites(jdbcUrl, resource, shape);
        });
    }

    /**
     * A fresh ledger for {@code resource} written through fenced HTTP calls ({@link HttpLedgerWrites}) to a service on
     * the database at {@code jdbcUrl}, the one {@code dataSource} reaches: the fence is the service's.
     */
    public static Ledger http(DataSource dataSource, String jdbcUrl, String resource) {
        return new Ledger(dataSource, Check.FENCED, resource, true, jdbc -> new HttpLedgerWrites(jdbcUrl, resource));
    }

    /**
     * A fresh ledger for {@code resource} written through {@code R2dbcFence} in reactive transactions
     * ({@link R2dbcLedgerWrites}) on the PostgreSQL server at {@code port}, the one {@code dataSource} reaches.
     */
    public static Ledger r2dbc(DataSource dataSource, int port, String resource) {
        return new Ledger(dataSource, Check.FENCED, resource, true, jdbc -> new R2dbcLedgerWrites(port, resource));
    }

    /** @param writes made once the tables are reset, when writes go elsewhere than through this JVM's JdbcFence */
    private Ledger(DataSource dataSource, Check check, String resource, boolean reset,
            Function<JdbcTemplate, Writes> writes) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.fence = new JdbcFence(jdbc, (table, rejection) -> { }, IDLE_TIMEOUT);
        this.check = Mutant.ledgerCheck(check);
        this.resource = resource;
        if (reset) {
            fence.createSchema();
            jdbc.execute("CREATE TABLE IF NOT EXISTS fault_ledger (seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
                    + " resource VARCHAR(200) NOT NULL, token BIGINT NOT NULL, write_id BIGINT NOT NULL)");
            jdbc.update("DELETE FROM fault_ledger WHERE resource = ?", resource);
            jdbc.update("DELETE FROM " + JdbcFence.TABLE + " WHERE resource = ?", resource);
        }
        this.writes = writes == null ? null : writes.apply(jdbc);
    }

    /**
     * Runs {@code hook} inside every write's transaction, right after the fence advanced to the write's token and so
     * holds the fence row's lock: where a child holder stops for {@code pause-inside-transaction}.
     */
    public void whenLocked(java.util.function.LongConsumer hook) {
        this.locked = hook;
    }

    /** A ledger another process reset: a child JVM writes to its parent's. */
    public static Ledger attach(DataSource dataSource, Check check, String resource) {
        return new Ledger(dataSource, check, resource, false, null);
    }

    /**
     * Writes in one transaction: move the fence to {@code token} (or refuse), then log the write.
     *
     * @return {@code true} when accepted, {@code false} when the fence refused a stale token
     * @throws RuntimeException when the database failed; the write may or may not have committed
     */
    public boolean write(String lease, long token, long writeId) {
        if (writes != null) {
            return writes.write(token, writeId);
        }
        Boolean accepted = tx.execute(status -> {
            try {
                advance(new FencingToken(lease, token));
                locked.accept(token);
            }
            catch (StaleTokenException stale) {
                status.setRollbackOnly();
                return false;
            }
            jdbc.update("INSERT INTO fault_ledger (resource, token, write_id) VALUES (?, ?, ?)", resource, token, writeId);
            return true;
        });
        return Boolean.TRUE.equals(accepted);
    }

    /** Moves the fence to {@code token}: through the library's JdbcFence, or without comparing when BROKEN. */
    private void advance(FencingToken token) {
        if (check == Check.FENCED) {
            fence.advance(resource, token);
        }
        else {
            moveWithoutComparing(jdbc, resource, token);
        }
    }

    /** The fence mutant's move, wherever a JdbcFence would run: the resource's fence set to any token it is shown. */
    static void moveWithoutComparing(JdbcTemplate jdbc, String resource, FencingToken token) {
        if (jdbc.update("UPDATE " + JdbcFence.TABLE + " SET fence = ? WHERE resource = ?", token.value(),
                resource) == 0) {
            jdbc.update("INSERT INTO " + JdbcFence.TABLE + " (resource, fence) VALUES (?, ?)", resource,
                    token.value());
        }
    }

    /**
     * Writes in the caller's transaction (an application's {@code @Transactional} method on this ledger's
     * DataSource): the fence check and the row commit or roll back with the caller's work.
     *
     * @throws StaleTokenException when the fence refused the token; the caller's transaction must roll back
     */
    public void writeInCallersTransaction(FencingToken token, long writeId) {
        // BROKEN too: the fence mutant must reach the @Transactional beans' writes as well.
        advance(token);
        jdbc.update("INSERT INTO fault_ledger (resource, token, write_id) VALUES (?, ?, ?)", resource, token.value(),
                writeId);
    }

    /** Same as {@link #write(String, long, long)} under the lease name {@code ledger}. */
    public boolean write(long token, long writeId) {
        return write("ledger", token, writeId);
    }

    /** The fence the ledger's writes check, for engines that advance it at grant. */
    public JdbcFence fence() {
        return fence;
    }

    public List<HistoryChecker.Accepted> accepted() {
        return jdbc.query("SELECT seq, token, write_id FROM fault_ledger WHERE resource = ? ORDER BY seq",
                (rs, i) -> new HistoryChecker.Accepted(rs.getLong(1), rs.getLong(2), rs.getLong(3)), resource);
    }
}
