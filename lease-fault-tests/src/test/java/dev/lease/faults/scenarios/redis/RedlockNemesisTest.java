package dev.lease.faults.scenarios.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.LeaseKind;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.ReusedConnections;
import dev.lease.faults.harness.Signals;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.AgainstMutants;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.Ledger;
import dev.lease.redis.RedlockLeaseBackend;
import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * EFFICIENCY leases on Redlock over three redis-servers under the nemesis of {@link RedisNemesisTest}, so that the
 * two rows of the results table compare one Redis with three: three application instances (each its own Lettuce
 * client per node, through a proxy of its own per node) loop on several lease names while each node is restarted
 * empty (no persistence) or paused at random moments, sometimes two at once, and the instances' links to the nodes
 * are frozen, cut, slowed and reset. Redlock issues no token either: the run counts the overlapping holders (two
 * nodes of three restarted empty within a ttl hand a lease out twice, see docs/redlock.md), and fails on a lost
 * acknowledged write or a history that does not reconcile with the table.
 */
@AgainstMutants(fence = false)
class RedlockNemesisTest extends FaultScenarios {

    private static final Duration TTL = TestTiming.millis(1500);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.EFFICIENCY, TTL,
            TestTiming.seconds(2), Duration.ofMillis(40));
    private static final int NAMES = 3;
    private static final int INSTANCES = 3;
    private static final int NODES = 3;

    @Test
    void nemesis() throws Exception {
        try (NemesisScenario.Closer servers = new NemesisScenario.Closer();
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("redlock-nemesis", "redlock", LeaseKind.EFFICIENCY,
                        NAMES, lease -> new Ledger(resource.dataSource(), Ledger.Check.BROKEN, lease))) {
            List<EmbeddedRedis> nodes = new ArrayList<>();
            for (int n = 0; n < NODES; n++) {
                nodes.add(servers.add(EmbeddedRedis.start()));
            }
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            for (int i = 1; i <= INSTANCES; i++) {
                List<LettuceConnectionFactory> factories = new ArrayList<>();
                for (int n = 0; n < NODES; n++) {
                    TcpProxy leaseLink = open.add(new TcpProxy(nodes.get(n).port()));
                    factories.add(nodes.get(n).connectionFactory(leaseLink.port(), TestTiming.millis(500)));
                    // The faults of one Redis link, spread over the instance's three links.
                    NemesisScenario.leaseLinkFaults(nemesis, "instance " + i + " to node " + (n + 1), leaseLink, TTL,
                            0.25 / NODES);
                }
                TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
                DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                        NemesisScenario.resourceLinkOptions("redlock-holder-" + i));
                RedlockLeaseBackend backend = open.add(new RedlockLeaseBackend(factories, "lease:",
                        RedlockLeaseBackend.DEFAULT_CLOCK_DRIFT_FACTOR, null));
                scenario.workers(i, open.add(ZooKeeperHolder.engine(backend, LeaseKind.EFFICIENCY)), HOLDS,
                        lease -> Ledger.attach(new ReusedConnections(ledgerLink), Ledger.Check.BROKEN, lease));
                NemesisScenario.resourceLinkFaults(nemesis, "instance " + i, resourceLink, TTL, 0.25);
            }
            for (int n = 0; n < NODES; n++) {
                EmbeddedRedis node = nodes.get(n);
                String which = "node " + (n + 1);
                // One entry per node, so that a node's faults never overlap (a stopped process cannot be paused);
                // different nodes' faults may, which sometimes takes a majority away.
                nemesis.add("restart (every key gone, whoever holds) or SIGSTOP of redis-server " + which,
                        2.0 / NODES, Duration.ZERO, TTL.multipliedBy(2), random -> {
                            if (random.nextBoolean()) {
                                node.stop();
                                return Nemesis.Off.described("restart of redis-server " + which
                                        + " (every key gone, whoever holds)", node::restart);
                            }
                            long pid = node.pid();
                            Signals.send(pid, "STOP");
                            return Nemesis.Off.described("SIGSTOP of redis-server " + which,
                                    () -> Signals.send(pid, "CONT"));
                        });
            }
            NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
            scenario.strike();
            List<HistoryChecker.Verdict> verdicts = scenario.finish();
            assertThat(verdicts).allSatisfy(v -> assertThat(v.cycles()).isPositive());
        }
    }
}
