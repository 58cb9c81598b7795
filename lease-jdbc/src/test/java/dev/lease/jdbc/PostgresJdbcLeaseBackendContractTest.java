package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseUnavailableException;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;
import dev.lease.sql.SqlDialect;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * The JDBC backend on a real PostgreSQL server; two DataSources stand for two application instances. Also the
 * faults only a server can have: sessions in different time zones, a killed connection, a stopped server.
 */
class PostgresJdbcLeaseBackendContractTest extends JdbcLeaseBackendContractTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        new JdbcLeaseBackend(postgres.dataSource()).createSchema();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return postgres.dataSource();
    }

    @Override
    protected DataSource secondDataSource() {
        return postgres.dataSource();
    }

    @Override
    protected String table() {
        return JdbcLeaseBackend.DEFAULT_TABLE;
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.POSTGRESQL;
    }

    @Override
    protected int serverPort() {
        return postgres.port();
    }

    @Override
    protected SingleConnectionDataSource through(TcpProxy proxy) {
        return new SingleConnectionDataSource("jdbc:postgresql://" + proxy.address() + "/postgres", "postgres", "",
                true);
    }

    @Test
    void instancesWhoseSessionsRunInDifferentTimeZonesAgreeOnExpiry() throws Exception {
        // 26 hours apart: with a timestamp column without time zone, the eastern instance would see the western
        // holder's lease as expired a day ago and take it.
        DataSource western = inTimeZone("Etc/GMT+12");
        DataSource eastern = inTimeZone("Pacific/Kiritimati");
        assertThat(new JdbcTemplate(western).queryForObject("SHOW TIME ZONE", String.class)).isEqualTo("Etc/GMT+12");
        assertThat(new JdbcTemplate(eastern).queryForObject("SHOW TIME ZONE", String.class))
                .isEqualTo("Pacific/Kiritimati");
        JdbcLeaseBackend west = new JdbcLeaseBackend(western);
        JdbcLeaseBackend east = new JdbcLeaseBackend(eastern);
        String name = uniqueName();
        var held = grant(west, name, seconds(30)).orElseThrow();
        assertThat(grant(east, name, seconds(30))).as("taken from another time zone").isEmpty();
        assertThat(west.renew(held)).isTrue();
        west.release(held);
        var next = grant(east, name, seconds(30)).orElseThrow();
        assertThat(next.token().getAsLong()).isGreaterThan(held.token().getAsLong());
        east.release(next);
    }

    /** Connections whose session time zone is {@code zone} (pgjdbc would otherwise send the JVM's own). */
    private static DataSource inTimeZone(String zone) {
        return new DelegatingDataSource(postgres.dataSource()) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET TIME ZONE '" + zone + "'");
                }
                return connection;
            }
        };
    }

    @Test
    void aKilledConnectionInterruptsTheHolderWithLeaseLostException() throws Exception {
        // The holder's only connection: once the server kills it, renewal cannot reach the lease row.
        SingleConnectionDataSource single = new SingleConnectionDataSource(
                postgres.dataSource(Map.of("ApplicationName", "lease-holder")).getConnection(), true);
        try {
            JdbcLeaseBackend holder = new JdbcLeaseBackend(single);
            assertHolderLosesLeaseWhen(holder, () -> {
                Integer killed = new JdbcTemplate(postgres.dataSource()).queryForObject(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
                        Integer.class, "lease-holder");
                assertThat(killed).as("holder connections terminated").isEqualTo(1);
            });
        }
        finally {
            single.destroy();
        }
    }

    @Test
    void aStoppedDatabaseInterruptsTheHolderWithLeaseLostException() throws Exception {
        PostgresServer doomed = PostgresServer.start();
        try {
            JdbcLeaseBackend holder = new JdbcLeaseBackend(doomed.dataSource());
            holder.createSchema();
            assertHolderLosesLeaseWhen(holder, doomed::stop);
        }
        finally {
            doomed.close();
        }
    }

    /**
     * A waiter whose connection goes silent (a frozen network: pgjdbc has no socket timeout by default, so a statement
     * would wait for ever) gives up at its waitFor plus a bound, naming the unreachable store, never a busy lease.
     */
    @Test
    void aWaiterCutOffByAFrozenNetworkGivesUpAtItsWaitForNamingTheUnreachableStore() throws Exception {
        Map<LeaseKind, LeaseBackend<?>> direct = new EnumMap<>(LeaseKind.class);
        direct.put(LeaseKind.CORRECTNESS, new JdbcLeaseBackend(postgres.dataSource()));
        direct.put(LeaseKind.EFFICIENCY, direct.get(LeaseKind.CORRECTNESS));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (TcpProxy proxy = new TcpProxy(postgres.port());
                LeaseEngine holders = new LeaseEngine(BackendRouter.of(direct), LeaseDefaults.standard())) {
            SingleConnectionDataSource viaProxy = new SingleConnectionDataSource(
                    "jdbc:postgresql://" + proxy.address() + "/postgres", "postgres", "", true);
            Map<LeaseKind, LeaseBackend<?>> cutOff = new EnumMap<>(LeaseKind.class);
            cutOff.put(LeaseKind.CORRECTNESS, new JdbcLeaseBackend(viaProxy));
            cutOff.put(LeaseKind.EFFICIENCY, cutOff.get(LeaseKind.CORRECTNESS));
            try (LeaseEngine waiters = new LeaseEngine(BackendRouter.of(cutOff), LeaseDefaults.standard())) {
                String name = uniqueName();
                LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(seconds(30));
                Duration waitFor = Duration.ofMillis(1500);
                try (Lease held = holders.acquire(spec)) {
                    long start = System.nanoTime();
                    Future<Lease> waiter = pool.submit(() -> waiters.acquire(spec.withWaitFor(waitFor)));
                    Thread.sleep(300); // waiting on the busy lease by now, over a live connection
                    proxy.freeze();

                    assertThatThrownBy(() -> waiter.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                            .isInstanceOf(ExecutionException.class)
                            .cause().isInstanceOf(LeaseUnavailableException.class)
                            .hasMessageContaining("'" + name + "'")
                            .hasMessageContaining("jdbc store could not be reached")
                            .hasMessageNotContaining("held by someone else");
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    System.out.println("Frozen PostgreSQL connection: waiter with waitFor " + waitFor.toMillis()
                            + " ms gave up after " + took.toMillis() + " ms");
                    assertThat(took).as("waitFor plus a bound").isLessThanOrEqualTo(waitFor.plus(seconds(3)));
                }
                finally {
                    proxy.unfreeze(); // lets the abandoned statement end
                }
            }
            finally {
                viaProxy.destroy();
            }
        }
        finally {
            pool.shutdownNow();
        }
    }

    private void assertHolderLosesLeaseWhen(LeaseBackend<?> holder, ThrowingAction fault) throws Exception {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, holder);
        routes.put(LeaseKind.EFFICIENCY, holder);
        Duration ttl = shortTtl();
        BlockingWork work = new BlockingWork();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LeaseEngine holderEngine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard())) {
            Future<String> call = pool.submit(() -> holderEngine.execute(
                    LeaseSpec.of(uniqueName(), LeaseKind.CORRECTNESS).withTtl(ttl), work));
            assertThat(work.awaitStarted(seconds(30))).isTrue();
            long faultAt = System.nanoTime();
            fault.run();
            assertThatThrownBy(() -> call.get(ttl.multipliedBy(2).plus(seconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(LeaseLostException.class)
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(work.wasInterrupted()).as("holder interrupted").isTrue();
            System.out.println("Holder interrupted " + Duration.ofNanos(System.nanoTime() - faultAt).toMillis()
                    + " ms after the fault (ttl " + ttl.toMillis() + " ms)");
        }
        finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface ThrowingAction {
        void run() throws Exception;
    }
}
