package dev.lease.faults.scenarios.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.KubernetesApi;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * Kubernetes leases at volume under a nemesis, over fabric8's mock API server in CRUD mode (no API server runs on
 * these machines): three application instances (each its own client and holder identity, reaching the server through
 * a proxy of its own) and two child JVM holders loop on several lease names at once, with short ttls and short holds,
 * some longer than the ttl. The API server is stopped and started again on its port with the objects it stored (as a
 * real one restarts over etcd); the fenced ledger is in a PostgreSQL of its own that crashes too; links to both are
 * frozen, cut, slowed and reset, COMMIT replies are held back past the client's timeout, and the children are paused
 * ({@code kill -STOP}), on random timers, overlapping, whoever holds. The instances also campaign for one election and
 * write in their terms, under the same faults. No clock jumps: a Kubernetes holder and its waiters count the lease
 * duration on their monotonic clocks, which a wall-clock jump does not move (the hand-picked clock scenarios of the
 * other backends show the same for the engine). The backends poll rather than watch: the mock stalls its event loop for
 * seconds whenever a watch closes, which a real server does not.
 */
class KubernetesNemesisTest extends FaultScenarios {

    /** Lease durations are whole seconds. */
    private static final Duration TTL = TestTiming.millis(2000);
    /** Requests give up well within the ttl, so a frozen link fails renewals instead of hanging them. */
    private static final Duration REQUEST_TIMEOUT = TestTiming.millis(1000);
    private static final NemesisScenario.Holds HOLDS = new NemesisScenario.Holds(LeaseKind.CORRECTNESS, TTL,
            TestTiming.seconds(2), Duration.ofMillis(40));
    /** More in a soak, for its cycle goal in a few minutes. */
    private static final int NAMES = Soak.ON ? 16 : 8;
    private static final int INSTANCES = 3;
    private static final int CHILDREN = 2;

    @Test
    void nemesis() throws Exception {
        try (KubernetesApi api = KubernetesApi.start();
                CrashablePostgres resource = CrashablePostgres.start();
                NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario("kubernetes-nemesis", "kubernetes (fabric8 mock)",
                        LeaseKind.CORRECTNESS, NAMES,
                        lease -> new Ledger(resource.dataSource(), Ledger.Check.FENCED, lease))) {
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), Duration.ofMillis(1500));
            scenario.election();
            for (int i = 1; i <= INSTANCES; i++) {
                TcpProxy leaseLink = open.add(new TcpProxy(api.port()));
                TcpProxy resourceLink = open.add(new TcpProxy(resource.port()));
                KubernetesClient client = open.add(KubernetesApi.client(KubernetesApi.url(leaseLink.port()),
                        REQUEST_TIMEOUT));
                LeaseEngine engine = open.add(ZooKeeperHolder.engine(KubernetesApi.backend(client, "instance-" + i),
                        LeaseKind.CORRECTNESS));
                DataSource ledgerLink = CrashablePostgres.dataSource(resourceLink.port(),
                        NemesisScenario.resourceLinkOptions("kubernetes-holder-" + i));
                scenario.instance(i, engine, HOLDS, ledgerLink);
                NemesisScenario.hostFaults(nemesis, "instance " + i, leaseLink, resourceLink, TTL, 1);
            }
            TcpProxy childLeaseLink = open.add(new TcpProxy(api.port()));
            TcpProxy childResourceLink = open.add(new TcpProxy(resource.port()));
            Map<String, String> args = new HashMap<>();
            args.put("backend", "kubernetes");
            args.put("master-url", KubernetesApi.url(childLeaseLink.port()));
            args.put("request-timeout-ms", Long.toString(REQUEST_TIMEOUT.toMillis()));
            args.put("ledger-url", CrashablePostgres.jdbcUrl(childResourceLink.port(),
                    NemesisScenario.resourceLinkQuery()));
            scenario.children(CHILDREN, HOLDS, args, childLeaseLink, childResourceLink);
            NemesisScenario.crashes(nemesis, "the resource PostgreSQL", resource, TestTiming.seconds(2));
            nemesis.add("stopped the API server, then started it on its port with the objects it stored", 1,
                    Duration.ZERO, TTL.multipliedBy(2), random -> {
                        api.down();
                        return api::up;
                    });
            scenario.strike();
            List<HistoryChecker.Verdict> verdicts = scenario.finish();
            assertThat(verdicts).allSatisfy(v -> assertThat(v.staleWritesAccepted()).isZero());
        }
    }
}
