package dev.lease.faults.scenarios.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;

import dev.lease.LeaseKind;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.PostgresServer;

/**
 * What the ZooKeeper fault scenarios share: a ZooKeeper server and the PostgreSQL of the fenced ledger (the real
 * JdbcFence), started once per class, and the holders' settings. Every write goes through {@link Ledger}, and the
 * history check must find no stale write accepted and nothing lost. The scenarios are in two classes, faults on the
 * holder ({@link ZooKeeperHolderFaultScenariosTest}) and on the store and the network
 * ({@link ZooKeeperFaultScenariosTest}), which the suite's test JVMs run at the same time.
 */
public abstract class ZooKeeperScenarios extends FaultScenarios {

    static final int TICK_MS = 250;
    static final Duration SESSION = seconds(2);
    static final Duration WAIT = seconds(3);
    /** Long enough that a fault often strikes while the work runs, so interrupt-on-loss is exercised. */
    static final Duration HOLD = Duration.ofMillis(1500);
    static final Duration BOUND = seconds(30);
    static final Duration POLL = Duration.ofMillis(5);

    static PostgresServer postgres;
    static TestingServer zookeeper;

    @BeforeParameterizedClassInvocation
    static void start() throws Exception {
        postgres = PostgresServer.start();
        zookeeper = new TestingServer(spec(-1), true);
    }

    @AfterParameterizedClassInvocation
    static void stop() throws Exception {
        // Shared by every scenario class of this base that a reused test JVM runs: none may close another's servers.
        if (zookeeper != null) {
            zookeeper.close();
            zookeeper = null;
        }
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
    }

    /**
     * A child holder (worker 3) whose first write is frozen ({@code pause-before-write}), started before the other
     * workers so that it gets the lease first: {@link StaleWrites#pausedAcross} makes it write stale.
     */
    static ChildHolder pausedChild(FaultRun run, String lease, String connect, Duration session, long seed)
            throws Exception {
        Map<String, String> args = childArgs(lease, connect, session, seed);
        args.put("pause-before-write", "true");
        ChildHolder child = run.child(3, args, Map.of());
        child.awaitWriteReady();
        return child;
    }

    static Ledger ledger(String resource) {
        return new Ledger(postgres.dataSource(), Ledger.Check.FENCED, resource);
    }

    static LeaseWorker.Config config(String lease, Duration ttl, long seed) {
        return new LeaseWorker.Config(lease, LeaseKind.CORRECTNESS, ttl, WAIT, HOLD, seed);
    }

    static Map<String, String> childArgs(String lease, String connect, Duration session, long seed) {
        Map<String, String> args = new HashMap<>();
        args.put("backend", "zookeeper");
        args.put("connect", connect);
        args.put("session-ms", Long.toString(session.toMillis()));
        args.put("root", ZooKeeperHolder.ROOT);
        args.put("lease", lease);
        args.put("resource", lease);
        args.put("ledger-url", postgres.jdbcUrl());
        args.put("ttl-ms", Long.toString(session.toMillis()));
        args.put("wait-ms", Long.toString(WAIT.toMillis()));
        args.put("hold-ms", "800");
        args.put("seed", Long.toString(seed));
        return args;
    }

    public static InstanceSpec spec(int serverId) {
        return new InstanceSpec(null, -1, -1, -1, true, serverId, TICK_MS, -1,
                Map.of("maxSessionTimeout", "600000", "4lw.commands.whitelist", "*"));
    }

    static TestingCluster cluster() throws Exception {
        List<InstanceSpec> specs = IntStream.rangeClosed(1, 3).mapToObj(ZooKeeperScenarios::spec).toList();
        TestingCluster cluster = new TestingCluster(new ArrayList<>(specs));
        cluster.start();
        return cluster;
    }

    static InstanceSpec leaderOf(TestingCluster cluster) {
        return await().atMost(BOUND).pollInterval(Duration.ofMillis(50)).until(() -> cluster.getInstances().stream()
                .filter(s -> srvr(s.getPort()).contains("Mode: leader")).findFirst().orElse(null), s -> s != null);
    }

    static String srvr(int port) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
        catch (IOException ex) {
            return "";
        }
    }
}
