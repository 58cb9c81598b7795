package dev.lease.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.lease.Durations;
import dev.lease.spi.Credentials;

/**
 * The DataSource lease bookkeeping takes its connections from: its pool, whose failure to hand out a connection is
 * told in words that name the pool and the setting to change, since the caller sees it as the cause of a
 * {@code LeaseUnavailableException} or a {@code LeaseLostException}. A pool that times out without a connection
 * failure behind it (HikariCP's {@code SQLTransientConnectionException} with no cause) had every connection busy;
 * anything else is a database that cannot be reached or refuses the login.
 *
 * <p>A wait so long that the caller probably stopped waiting first (the engine then only knows that the store did not
 * answer) is logged at WARN with the same words, at most once a minute.
 */
final class BookkeepingConnections extends DelegatingDataSource {

    /** A wait for a connection longer than this is worth a WARN: the engine asks no grant for less than a second. */
    private static final long SLOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private static final Log log = LogFactory.getLog(LeaseBookkeepingPool.class);

    private final Supplier<String> pool;
    private final String whenBusy;
    private final String settings;
    private final AtomicLong lastWarned = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    /**
     * @param target the pool
     * @param pool names the pool, such as {@code pool 'lease-bookkeeping'} (read when needed: HikariCP names its
     *        pool when it starts)
     * @param whenBusy what to do when every connection was busy
     * @param settings the properties that configure the pool's connections, such as {@code spring.datasource.*}
     */
    BookkeepingConnections(DataSource target, Supplier<String> pool, String whenBusy, String settings) {
        super(target);
        this.pool = pool;
        this.whenBusy = whenBusy;
        this.settings = settings;
    }

    @Override
    public Connection getConnection() throws SQLException {
        long start = System.nanoTime();
        try {
            Connection connection = obtainTargetDataSource().getConnection();
            warnIfSlow(start);
            return connection;
        }
        catch (SQLException ex) {
            throw noConnection(ex, System.nanoTime() - start);
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        long start = System.nanoTime();
        try {
            Connection connection = obtainTargetDataSource().getConnection(username, password);
            warnIfSlow(start);
            return connection;
        }
        catch (SQLException ex) {
            throw noConnection(ex, System.nanoTime() - start);
        }
    }

    /** The same kind of exception, so that Spring translates it as before, with the pool and the fix in words. */
    private SQLException noConnection(SQLException ex, long waitedNanos) {
        boolean busy = ex instanceof SQLTransientConnectionException && ex.getCause() == null;
        String message = "No connection for lease bookkeeping from " + pool.get() + " within "
                + Durations.formatNanos(waitedNanos) + " (" + Credentials.redact(ex.getMessage()) + "): "
                + (busy ? whenBusy : "check that the database is running and reachable, and " + settings
                        + " (url, username, password)");
        return ex instanceof SQLTransientConnectionException
                ? new SQLTransientConnectionException(message, ex.getSQLState(), ex.getErrorCode(), ex)
                : new SQLException(message, ex.getSQLState(), ex.getErrorCode(), ex);
    }

    private void warnIfSlow(long start) {
        long now = System.nanoTime();
        long last = lastWarned.get();
        if (now - start >= SLOW_NANOS && now - last >= WARN_EVERY_NANOS && lastWarned.compareAndSet(last, now)) {
            log.warn("Lease bookkeeping waited " + Durations.formatNanos(now - start) + " for a connection from "
                    + pool.get() + " (a grant, renewal or release waiting that long may fail or come too late): "
                    + whenBusy);
        }
    }
}
