package dev.lease.faults.scenarios.zookeeper;

import static dev.lease.faults.harness.StaleWrites.pauseUntilTakenOver;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.faults.checker.History;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Nemesis;
import dev.lease.faults.harness.NemesisScenario;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.workload.FrozenWrite;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.faults.workload.Worker;
import dev.lease.testing.TcpProxy;

/**
 * Fault scenarios on ZooKeeper, the fenced backend whose lease is a session, that strike the store and the network:
 * frozen networks, leader and ensemble loss, sessions expiring under grant requests, and a seeded random mix.
 */
class ZooKeeperFaultScenariosTest extends ZooKeeperScenarios {

    @Test
    void networkFreezePastTheSessionTimeout() throws Exception {
        networkFreeze("zookeeper-network-freeze", "zookeeper", "zk-freeze", ZooKeeperScenarios::ledger);
    }

    /** The network freeze, its ledger made by {@code ledger} from the lease name: JdbcFence's, or a JPA workload's. */
    static void networkFreeze(String scenario, String backend, String lease,
            java.util.function.Function<String, Ledger> ledger) throws Exception {
        try (FaultRun run = new FaultRun(scenario, backend, LeaseKind.CORRECTNESS, ledger.apply(lease));
                TcpProxy proxy1 = new TcpProxy(zookeeper.getPort());
                TcpProxy proxy2 = new TcpProxy(zookeeper.getPort());
                ZooKeeperHolder one = ZooKeeperHolder.connect(proxy1.address(), SESSION);
                ZooKeeperHolder two = ZooKeeperHolder.connect(proxy2.address(), SESSION)) {
            FrozenWrite gate = new FrozenWrite(run.history);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, SESSION, 3), gate.of(1)),
                    run.worker(2, two.engine(), config(lease, SESSION, 3), gate.of(2)));
            List<TcpProxy> proxies = List.of(proxy1, proxy2);
            StaleWrites.frozenAcross(run, gate, "froze the network of the holder", victim -> {
                proxies.get(victim - 1).freeze();
                return () -> proxies.get(victim - 1).unfreeze();
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
                int victim = workers.get(0).holding() ? 0 : 1;
                proxies.get(victim).freeze();
                long frozenAt = System.nanoTime();
                run.fault("froze the network of worker " + (victim + 1), frozenAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(frozenAt, victim + 1));
                proxies.get(victim).unfreeze();
            }
            run.finish();
        }
    }

    @Test
    void leaderKill() throws Exception {
        String lease = "zk-leader";
        try (TestingCluster cluster = cluster();
                FaultRun run = new FaultRun("zookeeper-leader-kill", "zookeeper (3 nodes)", LeaseKind.CORRECTNESS,
                        ledger(lease));
                ZooKeeperHolder one = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4));
                ZooKeeperHolder two = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4))) {
            ChildHolder child = pausedChild(run, lease, cluster.getConnectString(), seconds(4), 5);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, seconds(4), 5)),
                    run.worker(2, two.engine(), config(lease, seconds(4), 5)));
            StaleWrites.pausedAcross(run, child, workers, "killed the leader", () -> {
                InstanceSpec leader = leaderOf(cluster);
                cluster.killServer(leader);
                return () -> cluster.restartServer(leader);
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                long before = System.nanoTime();
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(before, -1));
                InstanceSpec leader = leaderOf(cluster);
                cluster.killServer(leader);
                long killedAt = System.nanoTime();
                run.fault("killed the leader " + leader.getConnectString(), killedAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(killedAt, -1));
                cluster.restartServer(leader);
            }
            run.finish();
        }
    }

    @Test
    void fullEnsembleOutage() throws Exception {
        String lease = "zk-ensemble";
        try (TestingCluster cluster = cluster();
                FaultRun run = new FaultRun("zookeeper-full-ensemble-outage", "zookeeper (3 nodes)",
                        LeaseKind.CORRECTNESS, ledger(lease));
                ZooKeeperHolder one = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4));
                ZooKeeperHolder two = ZooKeeperHolder.connect(cluster.getConnectString(), seconds(4))) {
            ChildHolder child = pausedChild(run, lease, cluster.getConnectString(), seconds(4), 6);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, seconds(4), 6)),
                    run.worker(2, two.engine(), config(lease, seconds(4), 6)));
            StaleWrites.pausedAcross(run, child, workers, "stopped all three servers, then started them again", () -> {
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.killServer(server);
                }
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.restartServer(server);
                }
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(1); round++) {
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
                long downAt = System.nanoTime();
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.killServer(server);
                }
                run.fault("stopped all three servers", downAt);
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().noneMatch(LeaseWorker::holding));
                for (InstanceSpec server : cluster.getInstances()) {
                    cluster.restartServer(server);
                }
                long upAt = System.nanoTime();
                await().atMost(BOUND.multipliedBy(2)).pollInterval(POLL).until(() -> run.grantedSince(upAt, -1));
            }
            run.finish();
        }
    }

    @Test
    void randomMix() throws Exception {
        String lease = "zk-mix";
        Random random = new Random(Seeds.of("zookeeper-random-mix"));
        try (FaultRun run = new FaultRun("zookeeper-random-mix", "zookeeper", LeaseKind.CORRECTNESS, ledger(lease));
                TcpProxy proxy1 = new TcpProxy(zookeeper.getPort());
                TcpProxy proxy2 = new TcpProxy(zookeeper.getPort());
                ZooKeeperHolder one = ZooKeeperHolder.connect(proxy1.address(), SESSION);
                ZooKeeperHolder two = ZooKeeperHolder.connect(proxy2.address(), SESSION)) {
            ChildHolder child = pausedChild(run, lease, zookeeper.getConnectString(), SESSION, 7);
            List<TcpProxy> proxies = List.of(proxy1, proxy2);
            List<LeaseWorker> workers = List.of(run.worker(1, one.engine(), config(lease, SESSION, 7)),
                    run.worker(2, two.engine(), config(lease, SESSION, 7)));
            StaleWrites.pausedAcross(run, child, workers, "nothing else", () -> StaleWrites.Undo.NOTHING);
            for (int round = 0; round < Soak.rounds(4); round++) {
                int victim = random.nextInt(2);
                TcpProxy proxy = proxies.get(victim);
                long at = System.nanoTime();
                switch (random.nextInt(6)) {
                    case 0 -> pauseUntilTakenOver(run, child);
                    case 1 -> {
                        proxy.freeze();
                        run.fault("froze the network of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, victim + 1));
                        proxy.unfreeze();
                    }
                    case 2 -> {
                        proxy.drop(true);
                        run.fault("dropped the packets of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, victim + 1));
                        proxy.drop(false);
                        proxy.reset();
                    }
                    case 3 -> {
                        proxy.reset();
                        run.fault("reset the connections of worker " + (victim + 1), at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                    }
                    case 4 -> {
                        proxy.delay(Duration.ofMillis(400));
                        run.fault("delayed the network of worker " + (victim + 1) + " by 400 ms", at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                        proxy.delay(Duration.ZERO);
                    }
                    default -> {
                        zookeeper.restart();
                        run.fault("restarted the ZooKeeper server", at);
                        await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(at, -1));
                    }
                }
            }
            run.finish();
        }
    }

    /**
     * Sessions that expire while grant requests are in flight. Three instances, each through a link of its own (and a
     * client set up like the auto-configuration's), loop on three contended names, waiting at most 1 s for a busy
     * one; each instance also has a name of its own, which it only asks for during its faults. On a seeded random
     * schedule (the nemesis) an instance's link drops (bytes vanish, nothing is closed), just as grant requests go out
     * (its own name's among them), and stays down until the server expired the session: once the link heals, Curator
     * retries the requests on a new session, long after their callers gave up, and on a name nobody else holds the
     * late grant commits. Safety as everywhere (a forced stale write first; no stale write accepted). Liveness once
     * the faults stop: no name is blocked by a holder nobody holds; each of the six is granted to another instance, on
     * a session of its own, at its first request, waiting at most one session timeout.
     */
    @Test
    void sessionExpiriesWhileGrantsAreInFlight() throws Exception {
        String prefix = "zk-expiry-in-flight";
        int instances = 3;
        int contended = 3;
        NemesisScenario.Holds holds = new NemesisScenario.Holds(LeaseKind.CORRECTNESS, SESSION, Duration.ofSeconds(1),
                Duration.ofMillis(40));
        try (NemesisScenario.Closer open = new NemesisScenario.Closer();
                NemesisScenario scenario = new NemesisScenario(prefix, "zookeeper", LeaseKind.CORRECTNESS,
                        contended + instances, ZooKeeperScenarios::ledger)) {
            Nemesis nemesis = scenario.nemesis(Duration.ofMillis(200), SESSION);
            for (int i = 1; i <= instances; i++) {
                TcpProxy link = open.add(new TcpProxy(zookeeper.getPort()));
                ZooKeeperHolder instance = open.add(ZooKeeperHolder.connectLikeProduction(link.address(), SESSION));
                for (int name = 0; name < contended; name++) {
                    worker(scenario, name, i, instance, holds);
                }
                LeaseWorker ownName = worker(scenario, contended + i - 1, i, instance, holds);
                ownName.standBy(true);
                expiresWithGrantsInFlight(nemesis, scenario, i, link, ownName);
            }
            TcpProxy childLink = open.add(new TcpProxy(zookeeper.getPort()));
            Map<String, String> args = new HashMap<>();
            args.put("backend", "zookeeper");
            args.put("connect", childLink.address());
            args.put("session-ms", Long.toString(SESSION.toMillis()));
            args.put("root", ZooKeeperHolder.ROOT);
            args.put("ledger-url", postgres.jdbcUrl());
            ChildHolder child = scenario.child(10, 0, holds, args, childLink);
            scenario.strike();

            nemesis.close(); // every link healed: the faults stop
            child.close();
            List<Worker> workers = new ArrayList<>();
            scenario.runs().forEach(run -> workers.addAll(run.workers()));
            workers.forEach(worker -> worker.standBy(true));
            // Idle for a while, not for a poll: a worker between its grant and its first step is neither.
            await().during(Duration.ofMillis(200)).atMost(BOUND).pollInterval(POLL).until(
                    () -> workers.stream().noneMatch(Worker::holding)
                            && scenario.runs().stream().noneMatch(run -> acquiresPending(run, -1, 0) > 0));
            ZooKeeperHolder other = open.add(ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION));
            int auditor = 9;
            for (int name = 0; name < contended + instances; name++) {
                String lease = prefix + "-" + (name + 1);
                scenario.runs().get(name).worker(auditor, other.engine(),
                        new LeaseWorker.Config(lease, LeaseKind.CORRECTNESS, SESSION, SESSION, Duration.ofMillis(40),
                                scenario.seed + name), LeaseWorker.BeforeWrite.NONE, attached(lease));
            }
            for (FaultRun run : scenario.runs()) {
                History.Op first = await().atMost(BOUND).pollInterval(POLL).until(() -> run.history.ops().stream()
                        .filter(op -> op.worker == auditor && op.kind == History.Kind.ACQUIRE
                                && op.outcome != History.Outcome.PENDING).findFirst().orElse(null), op -> op != null);
                assertThat(first.outcome).as("seed " + scenario.seed + " (" + Seeds.replay(scenario.seed)
                        + "): the first request of another instance, waiting one session timeout, after the faults "
                        + "stopped: " + first.detail).isEqualTo(History.Outcome.OK);
            }
            scenario.finish();
        }
    }

    /** Starts worker {@code instance} on the scenario's name {@code index}. */
    private static LeaseWorker worker(NemesisScenario scenario, int index, int instance, ZooKeeperHolder holder,
            NemesisScenario.Holds holds) {
        String lease = scenario.prefix + "-" + (index + 1);
        return scenario.runs().get(index).worker(instance, holder.engine(),
                holds.config(lease, scenario.seed * 31 + index * 7 + instance), LeaseWorker.BeforeWrite.NONE,
                attached(lease));
    }

    /**
     * The fault: the link of {@code instance} drops, and stays down past the session timeout, so that the server
     * expires the session as it would in production (no earlier: the holders' local deadlines rely on it). The client
     * still looks connected for two thirds of the session timeout, and the grant requests its workers send meanwhile
     * go out and are lost, among them one for its own name ({@code ownName} asks while the fault lasts); Curator
     * retries them, and once the link heals, on the new session. The link heals soon after the expiry, while Curator
     * still retries.
     */
    private static void expiresWithGrantsInFlight(Nemesis nemesis, NemesisScenario scenario, int instance,
            TcpProxy link, LeaseWorker ownName) {
        nemesis.add("dropped the link of instance " + instance + " past its session timeout", 1,
                SESSION.plusMillis(TICK_MS * 2), SESSION.multipliedBy(3).dividedBy(2), random -> {
                    link.drop(true);
                    long droppedAt = System.nanoTime();
                    ownName.standBy(false);
                    long deadline = droppedAt + SESSION.dividedBy(2).toNanos();
                    while (inFlight(scenario, instance, droppedAt) == 0 && System.nanoTime() - deadline < 0) {
                        Thread.sleep(POLL.toMillis());
                    }
                    return Nemesis.Off.described("dropped the link of instance " + instance + " past its session "
                            + "timeout, " + inFlight(scenario, instance, droppedAt) + " grant request(s) sent after",
                            () -> {
                                link.drop(false);
                                link.reset();
                                ownName.standBy(true);
                            });
                });
    }

    /** Grant requests of {@code instance} on every name, sent since {@code since} and still unanswered. */
    private static int inFlight(NemesisScenario scenario, int instance, long since) {
        return scenario.runs().stream().mapToInt(run -> acquiresPending(run, instance, since)).sum();
    }

    /** ACQUIREs of {@code worker} (any worker when -1) invoked after {@code since} (ever when 0) and still pending. */
    private static int acquiresPending(FaultRun run, int worker, long since) {
        return (int) run.history.ops().stream().filter(op -> op.kind == History.Kind.ACQUIRE
                && op.outcome == History.Outcome.PENDING && (worker < 0 || op.worker == worker)
                && (since == 0 || op.invokedAt - since > 0)).count();
    }

    private static Ledger attached(String lease) {
        return Ledger.attach(postgres.dataSource(), NemesisScenario.CHECK, lease);
    }
}
