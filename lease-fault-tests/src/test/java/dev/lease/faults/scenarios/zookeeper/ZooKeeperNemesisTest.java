package dev.lease.faults.scenarios.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.harness.ZooKeeperServerProcess;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * ZooKeeper at volume under a nemesis: three application instances (each its own Curator session, reaching the
 * server through a proxy of its own) and two child JVM holders loop on several lease names at once, with short
 * sessions and short holds, some longer than the session. The server runs in a JVM of its own and is killed with
 * SIGKILL and restarted from its transaction log; the fenced ledger is in a PostgreSQL of its own that crashes
 * too; links to both are frozen, cut, slowed and reset, COMMIT replies are held back past the client's timeout,
 * and the child is paused, all on random timers, overlapping, whoever holds. The instances also campaign for one
 * election ({@link LeaderWorker}) and write in their terms, under the same faults.
 */
class ZooKeeperNemesisTest extends FaultScenarios {

    private static final int TICK_MS = 250;
    private static final Duration SESSION = TestTiming.millis(1500);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.CORRECTNESS, SESSION,
            TestTiming.seconds(2), Duration.ofMillis(40));
    private static final int NAMES = 8;
    private static final int INSTANCES = 3;
    /** Child JVM holders, one on each of the first lease names, all behind one pair of links. */
    private static final int CHILDREN = 2;

    @Test
    void nemesis() throws Exception {
        try (ZooKeeperServerProcess zookeeper = ZooKeeperServerProcess.start(TICK_MS);
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("zookeeper-nemesis", "zookeeper", LeaseKind.CORRECTNESS,
                        NAMES, lease -> new Ledger(resource.dataSource(), Ledger.Check.FENCED, lease))) {
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            scenario.election();
            for (int i = 1; i <= INSTANCES; i++) {
                TcpProxy leaseLink = open.add(new TcpProxy(zookeeper.port()));
                TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
                ZooKeeperHolder holder = open.add(ZooKeeperHolder.connect(leaseLink.address(), SESSION));
                DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                        NemesisScenario.resourceLinkOptions("zk-holder-" + i));
                scenario.instance(i, holder.engine(), HOLDS, ledgerLink);
                NemesisScenario.hostFaults(nemesis, "instance " + i, leaseLink, resourceLink, SESSION, 1);
            }
            TcpProxy childLeaseLink = open.add(new TcpProxy(zookeeper.port()));
            TcpProxy childResourceLink = open.add(new TcpProxy(resource.port()));
            Map<String, String> args = new HashMap<>();
            args.put("backend", "zookeeper");
            args.put("connect", childLeaseLink.address());
            args.put("session-ms", Long.toString(SESSION.toMillis()));
            args.put("root", ZooKeeperHolder.ROOT);
            args.put("ledger-url", CrashablePostgres.jdbcUrl(childResourceLink.port(),
                        NemesisScenario.resourceLinkQuery()));
            scenario.children(CHILDREN, HOLDS, args, childLeaseLink, childResourceLink);
            NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
            nemesis.add("kill -9 of the ZooKeeper server, then a restart from its log", 1, Duration.ZERO,
                    SESSION.multipliedBy(2), random -> {
                        zookeeper.kill();
                        return zookeeper::start;
                    });
            scenario.strike();
            List<HistoryChecker.Verdict> verdicts = scenario.finish();
            assertThat(verdicts).allSatisfy(v -> assertThat(v.staleWritesAccepted()).isZero());
        }
    }
}
