package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * LISTEN/NOTIFY on a real PostgreSQL server: a release by one instance wakes the waiters of another at once. Each
 * waiter polls only once an hour here, so only the notification can wake it before the test's deadline.
 */
class PostgresReleaseNotificationTest {

    private static final Duration NEVER = Duration.ofHours(1);

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void createTable() {
        new JdbcLeaseBackend(dataSource(), "lease_notified").createSchema();
    }

    /** A new DataSource each time, as each application instance has its own. */
    private static DataSource dataSource() {
        return POSTGRES.get().dataSource(Map.of());
    }

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void aReleaseInOneInstanceWakesAWaiterOfAnotherAtOnce() throws Exception {
        try (JdbcLeaseBackend holder = new JdbcLeaseBackend(dataSource(), "lease_notified");
                JdbcLeaseBackend waiter = new JdbcLeaseBackend(dataSource(), "lease_notified")) {
            waiter.pollInterval(NEVER);
            var held = holder.tryAcquire(new GrantRequest("notified", seconds(30), reason -> { })).orElseThrow();
            startListening(waiter);

            Future<?> waiting = threads.submit(() -> {
                waiter.awaitRelease("notified", NEVER);
                return null;
            });
            // Not woken by anything but the release (another name's release included).
            var other = holder.tryAcquire(new GrantRequest("notified-other", seconds(30), reason -> { }))
                    .orElseThrow();
            holder.release(other);
            await().during(Duration.ofMillis(500)).atMost(seconds(5)).until(() -> !waiting.isDone());

            holder.release(held);

            waiting.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Through the engines. The engine's own backoff (at most a second) still bounds each wait, so this shows the
     * handover works end to end; the test above shows that it is the notification that wakes the waiter.
     */
    @Test
    void aWaiterInAnotherEngineGetsTheLeaseWhenTheHolderReleasesIt() throws Exception {
        try (JdbcLeaseBackend first = new JdbcLeaseBackend(dataSource(), "lease_notified");
                JdbcLeaseBackend second = new JdbcLeaseBackend(dataSource(), "lease_notified");
                LeaseEngine holding = engine(first); LeaseEngine waiting = engine(second)) {
            second.pollInterval(NEVER);
            startListening(second);
            Lease held = holding.acquire(LeaseSpec.of("handover", LeaseKind.CORRECTNESS).withTtl(seconds(30)));
            Future<Lease> next = threads.submit(() -> waiting.acquire(LeaseSpec.of("handover", LeaseKind.CORRECTNESS)
                    .withTtl(seconds(30)).withWaitFor(Duration.ofMinutes(10))));
            await().during(Duration.ofMillis(300)).atMost(seconds(5)).until(() -> !next.isDone());
            held.close();
            Lease taken = next.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(taken.token().isNewerThan(held.token())).isTrue();
            taken.close();
        }
    }

    @Test
    void aListeningConnectionThatDiesIsOpenedAgainAndCloseEndsIt() throws Exception {
        JdbcTemplate admin = new JdbcTemplate(dataSource());
        String channel = PgReleaseListener.channel("lease_notified");
        JdbcLeaseBackend waiter = new JdbcLeaseBackend(dataSource(), "lease_notified");
        waiter.pollInterval(NEVER);
        startListening(waiter);
        assertThat(admin.queryForList("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = ?"
                + " AND datname = current_database()",
                Boolean.class, "LISTEN " + channel)).containsExactly(true);
        await("listening again").atMost(seconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> listeners(admin, channel) == 1 && waiter.listeningForReleases());

        try (JdbcLeaseBackend holder = new JdbcLeaseBackend(dataSource(), "lease_notified")) {
            var held = holder.tryAcquire(new GrantRequest("reopened", seconds(30), reason -> { })).orElseThrow();
            Future<?> waiting = threads.submit(() -> {
                waiter.awaitRelease("reopened", NEVER);
                return null;
            });
            await().during(Duration.ofMillis(300)).atMost(seconds(5)).until(() -> !waiting.isDone());
            holder.release(held);
            waiting.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }

        waiter.close();
        await("no listener after close").atMost(seconds(10)).until(() -> listeners(admin, channel) == 0);
    }

    /**
     * The listening connection goes back to its pool (here: a pool of one connection that close does not close) as it
     * came: listening on nothing, so that the driver buffers no notifications for its next user, and with its
     * autocommit off again.
     */
    @Test
    void closeGivesTheConnectionBackNoLongerListeningAndWithItsAutocommit() throws Exception {
        try (Connection connection = dataSource().getConnection()) {
            connection.setAutoCommit(false);
            SingleConnectionDataSource pool = new SingleConnectionDataSource(connection, true);
            PgReleaseListener listener = new PgReleaseListener(pool, "lease_notified");
            await("listening").atMost(seconds(20)).pollInterval(Duration.ofMillis(20)).until(listener::listening);

            listener.close();

            assertThat(listener.listening()).isFalse();
            assertThat(connection.getAutoCommit()).as("autocommit").isFalse();
            try (Statement statement = connection.createStatement();
                    ResultSet channels = statement.executeQuery("SELECT * FROM pg_listening_channels()")) {
                assertThat(channels.next()).as("still listening on a channel").isFalse();
            }
            connection.rollback();
        }
    }

    /** Starts the backend's listener (the first wait does) and waits until it listens. */
    private static void startListening(JdbcLeaseBackend backend) throws InterruptedException {
        backend.awaitRelease("nobody-releases-this", Duration.ofMillis(1));
        await("listening").atMost(seconds(20)).pollInterval(Duration.ofMillis(20))
                .until(backend::listeningForReleases);
    }

    private static int listeners(JdbcTemplate admin, String channel) {
        return admin.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE query = ?"
                + " AND datname = current_database()", Integer.class,
                "LISTEN " + channel);
    }

    private static LeaseEngine engine(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
