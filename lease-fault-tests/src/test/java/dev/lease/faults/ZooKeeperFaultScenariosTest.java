package dev.lease.faults;

import static dev.lease.faults.StaleWrites.pauseUntilTakenOver;
import static dev.lease.testing.TestTiming.seconds;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.testing.TcpProxy;

/**
 * Fault scenarios on ZooKeeper, the fenced backend whose lease is a session, that strike the store and the network:
 * frozen networks, leader and ensemble loss, and a seeded random mix.
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
}
