package dev.lease.faults.scenarios.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.awaitility.core.ConditionTimeoutException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.ReusedConnections;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.spi.GrantFence;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * What the JDBC fault scenarios share: PostgreSQL with the lease table and the fenced ledger in the same database (as
 * an application would have it), restarted on its own data directory and port, and the holders' settings. The
 * scenarios are in two classes, faults on the holder ({@link JdbcHolderFaultScenariosTest}) and on the database and
 * its connections ({@link JdbcFaultScenariosTest}), which the suite's test JVMs run at the same time.
 */
abstract class JdbcScenarios extends FaultScenarios {

    static final Duration TTL = seconds(2);
    static final Duration WAIT = seconds(3);
    static final Duration HOLD = Duration.ofMillis(1500);
    static final Duration BOUND = seconds(30);
    static final Duration POLL = Duration.ofMillis(5);
    /** Connections of the holders; the fault injector's own connections have another name and are spared. */
    static final String HOLDERS = "lease-fault-holder";

    /** Restarted on its own data directory and port, so a restart keeps the lease table, the ledger and the URLs. */
    static PostgresServer postgres;

    @BeforeParameterizedClassInvocation
    static void start() throws Exception {
        postgres = PostgresServer.start();
        new JdbcLeaseBackend(postgres.dataSource()).createSchema();
    }

    @AfterParameterizedClassInvocation
    static void stop() throws IOException {
        // Shared by every scenario class of this base that a reused test JVM runs: none may close another's server.
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
    }

    /** Terminates every holder connection, again and again, until no in-process worker holds the lease. */
    static void killConnectionsWhileHeld(FaultRun run, List<LeaseWorker> workers) {
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
        JdbcTemplate admin = new JdbcTemplate(postgres.dataSource());
        String kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?";
        run.fault("pg_terminate_backend of every holder connection until the holder let go", System.nanoTime());
        await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> {
            admin.queryForObject(kill, Integer.class, HOLDERS);
            return workers.stream().noneMatch(LeaseWorker::holding);
        });
    }

    /** Stops PostgreSQL while a worker holds the lease, until nobody holds it, then starts it again. */
    static void restartWhileHeld(FaultRun run, List<LeaseWorker> workers) throws IOException {
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
        postgres.stop();
        run.fault("stopped PostgreSQL until the holder let go, then started it again", System.nanoTime());
        await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
        postgres.restart();
        long upAt = System.nanoTime();
        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(upAt, -1));
    }

    /**
     * A child holder (worker 3) whose first write is frozen ({@code pause-before-write}), started before the other
     * workers so that it gets the lease first: {@link StaleWrites#pausedAcross} makes it write stale.
     */
    static ChildHolder pausedChild(FaultRun run, String lease, Duration ttl, long seed) throws Exception {
        Map<String, String> args = childArgs(lease, ttl, seed);
        args.put("pause-before-write", "true");
        ChildHolder child = run.child(3, args, Map.of());
        child.awaitWriteReady();
        return child;
    }

    static DataSource holderDataSource() {
        return postgres.dataSource(Map.of("ApplicationName", HOLDERS));
    }

    /**
     * The successor's grant came after the store's expiry, which the holder's own deadline precedes: by then the
     * holder was interrupted. A ttl more covers a slow machine's scheduling, not a missing deadline. An assertion, so
     * that a mutant run counts it as a detection.
     */
    static void assertInterruptedSince(FaultRun run, int worker, long since) {
        try {
            await().atMost(TTL).pollInterval(POLL)
                    .until(() -> run.history.interruptTimesOf(worker).stream().anyMatch(t -> t - since > 0));
        }
        catch (ConditionTimeoutException ex) {
            throw new AssertionError("worker " + worker + " was not interrupted while its link to the lease store "
                    + "was frozen, although another worker was granted its lease", ex);
        }
    }

    /**
     * An engine whose lease store is reached through {@code link} on one reused connection, with no socket timeout:
     * a frozen link leaves its statements waiting until the link comes back.
     */
    static LeaseEngine engineThrough(TcpProxy link) {
        DataSource store = new ReusedConnections(CrashablePostgres.dataSource(link.port(),
                Map.of("ApplicationName", "lease-fault-frozen-link")));
        return ZooKeeperHolder.engine(new JdbcLeaseBackend(store), LeaseKind.CORRECTNESS);
    }

    static LeaseEngine engine() {
        return engine(null);
    }

    static LeaseEngine engine(GrantFence grantFence) {
        return ZooKeeperHolder.engine(new JdbcLeaseBackend(holderDataSource()), LeaseKind.CORRECTNESS, grantFence);
    }

    static Ledger ledger(String resource) {
        new Ledger(postgres.dataSource(), Ledger.Check.FENCED, resource);
        return Ledger.attach(holderDataSource(), Ledger.Check.FENCED, resource);
    }

    static LeaseWorker.Config config(String lease, Duration ttl, long seed) {
        return new LeaseWorker.Config(lease, LeaseKind.CORRECTNESS, ttl, WAIT, HOLD, seed);
    }

    static Map<String, String> childArgs(String lease, Duration ttl, long seed) {
        Map<String, String> args = new HashMap<>();
        args.put("backend", "jdbc");
        args.put("jdbc-url", postgres.jdbcUrl());
        args.put("lease", lease);
        args.put("resource", lease);
        args.put("ledger-url", postgres.jdbcUrl());
        args.put("ttl-ms", Long.toString(ttl.toMillis()));
        args.put("wait-ms", Long.toString(WAIT.toMillis()));
        args.put("hold-ms", "800");
        args.put("seed", Long.toString(seed));
        return args;
    }
}
