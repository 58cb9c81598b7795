package dev.lease.once;

import java.sql.Types;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseUnavailableException;
import dev.lease.spi.Credentials;
import dev.lease.spi.LeaseNames;
import dev.lease.spi.OnceStore;
import dev.lease.sql.LockWaits;
import dev.lease.sql.SqlDialect;

/**
 * {@link dev.lease.Once} keys in the table {@code lease_once(once_key, done_at, token)} of the application's
 * DataSource, each inserted in the transaction of the work it stands for: the active transaction of the
 * DataSource's transaction manager, else a new one, committed when the work returns and rolled back when it throws.
 *
 * <p>The insert is the database's own "insert unless present" ({@code ON CONFLICT DO NOTHING}, {@code INSERT
 * IGNORE}, or a failed insert on H2, which leaves its transaction usable): a key committed before inserts nothing
 * and the work is skipped; a key another open transaction inserted makes the insert wait for that transaction's
 * end on the primary key, then insert (it rolled back) or not (it committed). The wait is bounded by a lock timeout
 * given to the insert itself where the database allows it (PostgreSQL's transaction-local {@code set_config},
 * MariaDB's {@code SET STATEMENT}, an embedded H2 session's own timeout), so that recording a key is one statement.
 * {@code done_at} is the database's clock, which the retention sweep reads too, so that the hosts' clocks never
 * decide what is deleted.
 */
public final class JdbcOnceStore implements OnceStore {

    /** The table. */
    public static final String TABLE = "lease_once";

    /** Longest key, in characters. */
    public static final int MAX_KEY_LENGTH = 255;

    private static final String COLUMNS = "once_key, done_at, token";

    /**
     * The key's insert on PostgreSQL with its lock timeout (the third parameter) set, local to the transaction, by
     * the row's own select: the insert waits on another transaction's key only after producing that row.
     */
    private static final String POSTGRESQL_BOUNDED_INSERT = "INSERT INTO " + TABLE + " (" + COLUMNS + ") SELECT ?, "
            + "CURRENT_TIMESTAMP, ? FROM (SELECT set_config('lock_timeout', ?, true)) AS bound"
            + " ON CONFLICT (once_key) DO NOTHING";

    private static final String VERIFY = "SELECT once_key, done_at, token FROM " + TABLE + " WHERE 1 = 0";

    private static final int DELETE_BATCH = 500;

    private final JdbcTemplate jdbc;
    private final PlatformTransactionManager transactions;
    private final TransactionDefinition required = new DefaultTransactionDefinition();
    private volatile SqlDialect dialect;
    /** Whether the MySQL dialect's database is MariaDB, which bounds a statement's lock wait in the statement. */
    private volatile boolean mariaDb;

    /**
     * A store in the given DataSource, whose work runs in transactions of the given manager.
     *
     * @param dataSource the application's DataSource, where the work writes
     * @param transactions the transaction manager of that DataSource ({@code DataSourceTransactionManager},
     *        {@code JpaTransactionManager} over it, JTA), so that the key commits with the work's writes
     */
    public JdbcOnceStore(DataSource dataSource, PlatformTransactionManager transactions) {
        this.jdbc = new JdbcTemplate(Objects.requireNonNull(dataSource, "dataSource"));
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    @Override
    public boolean runOnce(String key, Optional<FencingToken> token, Duration wait, Work work) throws Throwable {
        validateKey(key);
        TransactionStatus status = transactions.getTransaction(required);
        try {
            requireTransactionOfItsDataSource(key);
            if (!record(key, token, wait)) {
                transactions.commit(status);
                return false;
            }
            work.run();
        }
        catch (Throwable ex) {
            end(status, ex);
            throw ex;
        }
        transactions.commit(status);
        return true;
    }

    /**
     * A transaction this store opened is rolled back: the key goes with the work's writes. A transaction it joined
     * is left to its owner, whose rules decide for the work's writes and the key alike.
     */
    private void end(TransactionStatus status, Throwable failure) {
        try {
            if (status.isNewTransaction()) {
                transactions.rollback(status);
            }
            else {
                transactions.commit(status);
            }
        }
        catch (RuntimeException | Error ex) {
            failure.addSuppressed(ex);
        }
    }

    /**
     * Inserts the key, its lock wait bounded by {@code wait} in the insert itself where the database allows it, so
     * that recording a key costs the one statement: on PostgreSQL a transaction-local {@code set_config} evaluated by
     * the insert before it can wait (it then bounds the rest of the work's transaction too, and ends with it); on
     * MariaDB {@code SET STATEMENT ... FOR} the insert; on an embedded H2 the session's lock timeout, set and set back
     * without a statement. MySQL, and H2 over TCP, read, set and restore the lock timeout around the insert.
     */
    private boolean record(String key, Optional<FencingToken> token, Duration wait) {
        SqlDialect d = dialect();
        SqlParameterValue tokenValue = new SqlParameterValue(Types.BIGINT, token.map(FencingToken::value).orElse(null));
        Object[] args = d.insertBindsKeyAgain() ? new Object[] {key, tokenValue, key} : new Object[] {key, tokenValue};
        long start = System.nanoTime();
        try {
            if (wait == null) {
                return jdbc.update(insert(d), args) > 0;
            }
            if (d == SqlDialect.POSTGRESQL) {
                return jdbc.update(POSTGRESQL_BOUNDED_INSERT, key, tokenValue, d.lockTimeout(wait)) > 0;
            }
            if (mariaDb) {
                // A number of seconds this store computed, not an input: SET STATEMENT takes no parameter.
                return jdbc.update("SET STATEMENT innodb_lock_wait_timeout = " + d.lockTimeout(wait) + " FOR "
                        + insert(d), args) > 0;
            }
            if (d == SqlDialect.H2) {
                Optional<Boolean> inserted = H2LockTimeout.bounded(jdbc, (int) Math.min(Integer.MAX_VALUE,
                        (Long) d.lockTimeout(wait)), () -> jdbc.update(insert(d), args) > 0);
                if (inserted.isPresent()) {
                    return inserted.get();
                }
            }
            return LockWaits.bounded(jdbc, d, wait, () -> jdbc.update(insert(d), args) > 0,
                    (waitedMillis, ex) -> LeaseUnavailableException.onceKeyBusy(key, Duration.ofMillis(waitedMillis),
                            ex));
        }
        catch (DuplicateKeyException ex) {
            // H2 alone: its insert looked for the key before another transaction's insert of it committed.
            return false;
        }
        catch (DataAccessException ex) {
            if (LockWaits.isLockTimeout(d, ex)) {
                throw LeaseUnavailableException.onceKeyBusy(key,
                        Duration.ofMillis((System.nanoTime() - start) / 1_000_000), ex);
            }
            throw ex;
        }
    }

    private static String insert(SqlDialect d) {
        return d.insertUnlessPresent(TABLE, COLUMNS, "?, " + d.now() + ", ?", "once_key", "?");
    }

    private void requireTransactionOfItsDataSource(String key) {
        if (!Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) LockWaits::isInThreadBoundTransaction))) {
            throw new IllegalStateException("@Once key '" + LeaseNames.printable(key) + "' cannot be recorded in the "
                    + "work's transaction: " + transactions.getClass().getSimpleName() + " opened a transaction that "
                    + "does not hold a connection of the DataSource of " + TABLE + ", so the key would not commit with "
                    + "the work's writes. Give the store the transaction manager of that DataSource.");
        }
    }

    /**
     * Checks that the table can be read and that the transaction manager runs transactions on the DataSource.
     *
     * @param users the {@code @Once} methods, for messages
     * @throws LeaseConfigurationException when either is not so, with the DDL or the fix
     */
    @Override
    public void verify(String users) {
        try {
            jdbc.queryForList(VERIFY);
        }
        catch (DataAccessException ex) {
            throw new LeaseConfigurationException(users + " record(s) their keys in the table " + TABLE + ", which "
                    + "cannot be read: " + Credentials.redact(ex.getMostSpecificCause().getMessage()) + ".",
                    "create it (for example in a Flyway migration) with\n" + createTableStatement() + "\nor set "
                            + "lease.once.initialize-schema: always.");
        }
        TransactionStatus status = transactions.getTransaction(required);
        boolean bound;
        try {
            bound = Boolean.TRUE.equals(jdbc.execute(
                    (ConnectionCallback<Boolean>) LockWaits::isInThreadBoundTransaction));
        }
        finally {
            transactions.rollback(status);
        }
        if (!bound) {
            throw new LeaseConfigurationException(users + " cannot run in a transaction of the DataSource of "
                    + TABLE + ": the transaction manager " + transactions.getClass().getName() + " does not bind "
                    + "a connection of that DataSource, so the key would not commit with the work's writes.",
                    "make the application's transaction manager the one of that DataSource "
                            + "(DataSourceTransactionManager over it, or JpaTransactionManager with its DataSource).");
        }
    }

    /** Creates the table unless it exists, with the DDL of this database ({@code dev/lease/once/schema-<platform>.sql}). */
    public void createSchema() {
        jdbc.execute(createTableStatement());
    }

    /** The DDL of this database. */
    String createTableStatement() {
        return SqlDialect.readStatement(dialect().script("dev/lease/once/schema"));
    }

    /**
     * Deletes the keys recorded longer ago than {@code retention} by the database's clock, in batches, each in a
     * statement of its own; a key younger than that is never deleted.
     *
     * @param retention how long keys are kept
     * @return how many keys were deleted
     */
    public int deleteOlderThan(Duration retention) {
        SqlDialect d = dialect();
        String delete = d.deleteAtMost(TABLE, "once_key", "done_at < " + d.nowPlusMillis());
        int total = 0;
        int deleted;
        do {
            deleted = jdbc.update(delete, -retention.toMillis(), DELETE_BATCH);
            total += deleted;
        }
        while (deleted == DELETE_BATCH);
        return total;
    }

    private SqlDialect dialect() {
        SqlDialect d = dialect;
        if (d == null) {
            String product = jdbc.execute((ConnectionCallback<String>) c -> c.getMetaData().getDatabaseProductName());
            d = SqlDialect.forProductName(product).orElseThrow(() -> new LeaseConfigurationException("@Once keys are "
                    + "recorded on PostgreSQL, MySQL, MariaDB and H2, but the database is '" + product + "'.",
                    "run @Once methods on one of those databases."));
            mariaDb = product != null && product.toLowerCase(Locale.ROOT).contains("mariadb");
            dialect = d;
        }
        return d;
    }

    static void validateKey(String key) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("@Once key '" + LeaseNames.printable(key) + "' is blank: name the "
                    + "work and its period, such as 'nightly-report-#{period}'.");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("@Once key '" + LeaseNames.printable(key.substring(0, 40)) + "...' is "
                    + key.length() + " characters long, at most " + MAX_KEY_LENGTH + " are allowed.");
        }
    }
}
