package dev.lease.faults.scenarios.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.mariadb.jdbc.MariaDbDataSource;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.ReusedConnections;
import dev.lease.faults.harness.Signals;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * The JDBC backend at volume under a nemesis, on PostgreSQL and on MariaDB: three application instances (each its
 * own backend and connections, reaching the lease store through a proxy of its own) and two child JVM holders loop
 * on several lease names at once, with short ttls and short holds, some longer than the ttl. The fenced ledger is in
 * a PostgreSQL of its own, apart from the lease store, so a fault on one leaves the other up. The nemesis crashes
 * both PostgreSQLs ({@code pg_ctl stop -m immediate}; MariaDB is paused instead), freezes, cuts, slows and resets
 * the holders' links, holds COMMIT replies back past the client's timeout and pauses the children, on random
 * timers, overlapping, whoever holds. The instances also campaign for one election ({@link LeaderWorker}) and write in
 * their terms, under the same faults.
 */
class JdbcNemesisTest extends FaultScenarios {

    private static final Duration TTL = TestTiming.millis(1500);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.CORRECTNESS, TTL,
            TestTiming.seconds(2), Duration.ofMillis(40));
    private static final int NAMES = 8;
    private static final int INSTANCES = 3;
    private static final int CHILDREN = 2;

    @Test
    void postgres() throws Exception {
        try (CrashablePostgres store = CrashablePostgres.start();
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("jdbc-postgresql-nemesis", "jdbc (PostgreSQL)",
                        LeaseKind.CORRECTNESS, NAMES,
                        lease -> new Ledger(resource.dataSource(), Ledger.Check.FENCED, lease))) {
            new JdbcLeaseBackend(store.dataSource()).createSchema();
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            run(scenario, nemesis, open, store.port(), resource,
                    port -> CrashablePostgres.dataSource(port, NemesisScenario.pgLinkOptions("jdbc-holder")),
                    port -> CrashablePostgres.jdbcUrl(port, "socketTimeout=2&connectTimeout=2"));
            NemesisScenario.crashes(nemesis, "the lease-store PostgreSQL", store, TestTiming.seconds(2));
            scenario.strike();
            assertSafe(scenario.finish());
        }
    }

    @Test
    @EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
    void mariadb() throws Exception {
        try (MariaDbServer store = MariaDbServer.start("leases");
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("jdbc-mariadb-nemesis", "jdbc (MariaDB)",
                        LeaseKind.CORRECTNESS, NAMES,
                        lease -> new Ledger(resource.dataSource(), Ledger.Check.FENCED, lease))) {
            new JdbcLeaseBackend(store.dataSource()).createSchema();
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            run(scenario, nemesis, open, store.port(), resource, port -> mariadb(store.jdbcUrl(port,
                    "socketTimeout=2000", "connectTimeout=2000")), port -> store.jdbcUrl(port, "socketTimeout=2000",
                            "connectTimeout=2000"));
            nemesis.add("SIGSTOP of the lease-store MariaDB", 1, TTL.dividedBy(4), TTL.multipliedBy(2), random -> {
                Signals.send(store.pid(), "STOP");
                return () -> Signals.send(store.pid(), "CONT");
            });
            scenario.strike();
            assertSafe(scenario.finish());
        }
    }

    /**
     * Starts the instances and the children with their links, and registers the faults they share whatever the
     * lease store.
     *
     * @param link a DataSource to the lease store as reached on a port (a proxy's)
     * @param childUrl the same as a JDBC URL, for a child JVM
     */
    private static void run(NemesisScenario scenario, Nemesis nemesis, NemesisScenario.Closer open, int storePort,
            CrashablePostgres resource, IntFunction<DataSource> link, IntFunction<String> childUrl) throws Exception {
        scenario.election();
        for (int i = 1; i <= INSTANCES; i++) {
            TcpProxy leaseLink = open.add(new TcpProxy(storePort));
            TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
            JdbcLeaseBackend backend = new JdbcLeaseBackend(new ReusedConnections(link.apply(leaseLink.port())));
            DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                    NemesisScenario.resourceLinkOptions("jdbc-holder-" + i));
            LeaseEngine engine = open.add(ZooKeeperHolder.engine(backend, LeaseKind.CORRECTNESS));
            scenario.instance(i, engine, HOLDS, ledgerLink);
            NemesisScenario.hostFaults(nemesis, "instance " + i, leaseLink, resourceLink, TTL, 1);
        }
        TcpProxy childLeaseLink = open.add(new TcpProxy(storePort));
        TcpProxy childResourceLink = open.add(new TcpProxy(resource.port()));
        Map<String, String> args = new HashMap<>();
        args.put("backend", "jdbc");
        args.put("jdbc-url", childUrl.apply(childLeaseLink.port()));
        args.put("ledger-url", CrashablePostgres.jdbcUrl(childResourceLink.port(),
                NemesisScenario.resourceLinkQuery()));
        scenario.children(CHILDREN, HOLDS, args, childLeaseLink, childResourceLink);
        NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
    }

    private static DataSource mariadb(String url) {
        try {
            return new MariaDbDataSource(url);
        }
        catch (SQLException ex) {
            throw new IllegalArgumentException(url, ex);
        }
    }

    private static void assertSafe(List<HistoryChecker.Verdict> verdicts) {
        assertThat(verdicts).allSatisfy(v -> assertThat(v.staleWritesAccepted()).isZero());
    }
}
