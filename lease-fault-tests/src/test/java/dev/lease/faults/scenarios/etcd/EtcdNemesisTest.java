package dev.lease.faults.scenarios.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.etcd.EtcdLeaseBackend;
import dev.lease.etcd.EtcdTesting;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.ReusedConnections;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.EtcdServer;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * etcd at volume under a nemesis: a three-member cluster of Debian's etcd, three application instances (each its own
 * jetcd client on one member, through a proxy of its own) and two child JVM holders loop on several lease names at
 * once, with short ttls and short holds, some longer than the ttl. Members are killed with SIGKILL and restarted from
 * their data, or paused ({@code kill -STOP}), or cut off from their peers (the proxy in front of a member's peer port
 * frozen: the raft messages it sends held, while it still hears the others); the fenced ledger is in a PostgreSQL of its own that crashes too; links
 * to both are frozen, cut, slowed and reset, and the children are paused, on random timers, overlapping, whoever
 * holds. The instances also campaign for one election and write in their terms, under the same faults. A fourth
 * instance's client knows every member (no proxy), as a production client would: a paused member, often a follower
 * while the quorum and its leader go on, is one of its three, and its idempotent calls are sent again to the others.
 */
class EtcdNemesisTest extends FaultScenarios {

    /** etcd leases have whole seconds, and etcd grants at least about 2 s whatever is asked (its minimum ttl). */
    private static final Duration TTL = TestTiming.millis(2000);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.CORRECTNESS, TTL,
            TestTiming.seconds(2), Duration.ofMillis(40));
    /**
     * Twice as many in a soak: faults overlap there (hundreds of them, each resource-link fault holding a worker up to
     * its 10 s socket timeout), and 8 names made about 5,000 cycles in the soak's time on two loaded cores.
     */
    private static final int NAMES = Soak.ON ? 16 : 8;
    private static final int INSTANCES = 3;
    private static final int CHILDREN = 2;
    private static final String PREFIX = "/nemesis/";

    @Test
    void nemesis() throws Exception {
        try (EtcdServer etcd = EtcdServer.startWithPeerLinks(3);
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("etcd-nemesis", "etcd", LeaseKind.CORRECTNESS, NAMES,
                        lease -> new Ledger(resource.dataSource(), Ledger.Check.FENCED, lease))) {
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            scenario.election();
            for (int i = 1; i <= INSTANCES; i++) {
                TcpProxy leaseLink = open.add(new TcpProxy(etcd.clientPort(i % etcd.size())));
                TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
                Client client = open.add(EtcdTesting.client(EtcdServer.url(leaseLink.port())));
                EtcdLeaseBackend backend = open.add(new EtcdLeaseBackend(client, PREFIX, TTL));
                var engine = open.add(ZooKeeperHolder.engine(backend, LeaseKind.CORRECTNESS));
                DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                        NemesisScenario.resourceLinkOptions("etcd-holder-" + i));
                scenario.instance(i, engine, HOLDS, ledgerLink);
                NemesisScenario.hostFaults(nemesis, "instance " + i, leaseLink, resourceLink, TTL, 1);
            }
            // One more instance whose client knows every member, directly: a member paused or killed is one of its
            // three, and its calls must go on through the other two.
            TcpProxy everyMemberResourceLink = open.add(new TcpProxy(resource.port()));
            Client everyMember = open.add(EtcdTesting.client(etcd.endpoints()));
            var everyMemberEngine = open.add(ZooKeeperHolder.engine(
                    open.add(new EtcdLeaseBackend(everyMember, PREFIX, TTL)), LeaseKind.CORRECTNESS));
            DataSource everyMemberLedger = CrashablePostgres.dataSource(everyMemberResourceLink.port(),
                    NemesisScenario.resourceLinkOptions("etcd-holder-every-member"));
            scenario.workers(INSTANCES + 1, everyMemberEngine, HOLDS,
                    lease -> Ledger.attach(new ReusedConnections(everyMemberLedger), NemesisScenario.CHECK, lease));
            TcpProxy childLeaseLink = open.add(new TcpProxy(etcd.clientPort(0)));
            TcpProxy childResourceLink = open.add(new TcpProxy(resource.port()));
            Map<String, String> args = new HashMap<>();
            args.put("backend", "etcd");
            args.put("endpoints", EtcdServer.url(childLeaseLink.port()));
            args.put("prefix", PREFIX);
            args.put("ledger-url", CrashablePostgres.jdbcUrl(childResourceLink.port(),
                    NemesisScenario.resourceLinkQuery()));
            scenario.children(CHILDREN, HOLDS, args, childLeaseLink, childResourceLink);
            NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
            // One entry for all, so that at most one member is struck at a time and the cluster keeps its quorum. The
            // kinds take turns, so that a short run (a handful of member faults) sees each of them: the weight is what
            // a short run needs for about four.
            AtomicInteger turn = new AtomicInteger(new Random(scenario.seed).nextInt(4));
            nemesis.add("kill -9 (then a restart from its data), SIGSTOP or frozen peer link of an etcd member, or "
                    + "SIGSTOP of a follower", 3, Duration.ZERO, TTL.multipliedBy(2), random -> {
                        int pick = turn.getAndIncrement() % 4;
                        int member = pick == 2 ? follower(etcd, random) : random.nextInt(etcd.size());
                        if (pick == 3) {
                            etcd.peerLink(member).freeze();
                            return Nemesis.Off.described("froze the peer link of etcd member " + member,
                                    () -> etcd.peerLink(member).unfreeze());
                        }
                        if (pick == 0) {
                            etcd.kill(member);
                            return Nemesis.Off.described("kill -9 of etcd member " + member,
                                    () -> etcd.restart(member));
                        }
                        etcd.pause(member);
                        return Nemesis.Off.described("SIGSTOP of etcd member " + member
                                + (pick == 2 ? " (a follower)" : ""), () -> etcd.resume(member));
                    });
            scenario.strike();
            List<HistoryChecker.Verdict> verdicts = scenario.finish();
            assertThat(verdicts).allSatisfy(v -> assertThat(v.staleWritesAccepted()).isZero());
        }
    }

    /** A member that is not the raft leader now; any member when none answers who the leader is (an election). */
    private static int follower(EtcdServer etcd, Random random) {
        int asked = random.nextInt(etcd.size());
        try {
            return (etcd.leader(asked) + 1 + random.nextInt(etcd.size() - 1)) % etcd.size();
        }
        catch (IOException | IllegalStateException noLeader) {
            return asked;
        }
    }
}
