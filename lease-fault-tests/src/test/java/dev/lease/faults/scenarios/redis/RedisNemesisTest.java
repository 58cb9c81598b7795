package dev.lease.faults.scenarios.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * EFFICIENCY leases on Redis at volume under a nemesis: three application instances (each its own Lettuce client
 * through a proxy of its own) loop on several lease names while redis-server is restarted at random moments (no
 * persistence: the keys of whoever holds vanish while the holder still believes it holds) and paused, and the
 * instances' links are frozen, cut, slowed and reset. Redis issues no token, so the ledger (a PostgreSQL of its own,
 * which crashes too) cannot refuse anything: the run counts the overlapping holders instead of failing on them, and
 * still fails on a lost acknowledged write or a history that does not reconcile with the table.
 */
@AgainstMutants(fence = false)
class RedisNemesisTest extends FaultScenarios {

    private static final Duration TTL = TestTiming.millis(1500);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.EFFICIENCY, TTL,
            TestTiming.seconds(2), Duration.ofMillis(40));
    private static final int NAMES = 3;
    private static final int INSTANCES = 3;

    @Test
    void nemesis() throws Exception {
        try (EmbeddedRedis redis = EmbeddedRedis.start();
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("redis-nemesis", "redis", LeaseKind.EFFICIENCY, NAMES,
                        lease -> new Ledger(resource.dataSource(), Ledger.Check.BROKEN, lease))) {
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            for (int i = 1; i <= INSTANCES; i++) {
                TcpProxy leaseLink = open.add(new TcpProxy(redis.port()));
                TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
                LettuceConnectionFactory factory = redis.connectionFactory(leaseLink.port(), TestTiming.millis(500));
                DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                        NemesisScenario.resourceLinkOptions("redis-holder-" + i));
                scenario.workers(i, open.add(ZooKeeperHolder.engine(new RedisLeaseBackend(factory, "lease:"),
                        LeaseKind.EFFICIENCY)), HOLDS,
                        lease -> Ledger.attach(new ReusedConnections(ledgerLink), Ledger.Check.BROKEN, lease));
                NemesisScenario.leaseLinkFaults(nemesis, "instance " + i, leaseLink, TTL, 0.25);
                NemesisScenario.resourceLinkFaults(nemesis, "instance " + i, resourceLink, TTL, 0.25);
            }
            // One entry for both, so that they never overlap: a stopped process cannot be restarted.
            nemesis.add("restart (every key gone, whoever holds) or SIGSTOP of redis-server", 2, Duration.ZERO,
                    TTL.multipliedBy(2), random -> {
                        if (random.nextBoolean()) {
                            redis.stop();
                            return Nemesis.Off.described("restart of redis-server (every key gone, whoever holds)",
                                    redis::restart);
                        }
                        long pid = redis.pid();
                        Signals.send(pid, "STOP");
                        return Nemesis.Off.described("SIGSTOP of redis-server", () -> Signals.send(pid, "CONT"));
                    });
            NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
            scenario.strike();
            List<HistoryChecker.Verdict> verdicts = scenario.finish();
            assertThat(verdicts).allSatisfy(v -> assertThat(v.cycles()).isPositive());
        }
    }
}
