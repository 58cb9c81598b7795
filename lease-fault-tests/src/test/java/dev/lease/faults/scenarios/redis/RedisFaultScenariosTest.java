package dev.lease.faults.scenarios.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Signals;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.AgainstMutants;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.testing.EmbeddedRedis;

/**
 * EFFICIENCY leases on Redis under a restart and a paused server ({@code kill -STOP} of redis-server). Redis has no
 * fencing token, so nothing stops a second holder: the suite counts the overlaps instead of failing, and still
 * checks that no acknowledged write is lost.
 */
@AgainstMutants(fence = false)
class RedisFaultScenariosTest extends FaultScenarios {

    private static final Duration TTL = seconds(2);
    private static final Duration HOLD = Duration.ofMillis(1500);
    private static final Duration BOUND = seconds(30);
    private static final Duration POLL = Duration.ofMillis(5);

    private static EmbeddedRedis redis;
    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    @BeforeParameterizedClassInvocation
    static void start() throws IOException {
        redis = EmbeddedRedis.start();
    }

    @AfterParameterizedClassInvocation
    static void stop() throws IOException {
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeConnections() {
        factories.forEach(LettuceConnectionFactory::destroy);
    }

    @Test
    void restart() throws Exception {
        runRedis("redis-restart", "restarted redis-server at once while held (no persistence: every key is gone)", 11,
                () -> {
            redis.stop();
            return () -> redis.restart();
        });
    }

    @Test
    void pausedServer() throws Exception {
        runRedis("redis-paused-server", "SIGSTOP of redis-server for 1.5 ttls, then SIGCONT", 12,
                TTL.multipliedBy(3).dividedBy(2), () -> {
            long pid = redis.pid();
            Signals.send(pid, "STOP");
            return () -> Signals.send(pid, "CONT");
        });
    }

    private void runRedis(String scenario, String what, long seed, Fault fault) throws Exception {
        runRedis(scenario, what, seed, Duration.ZERO, fault);
    }

    /** @param on how long the fault stays on */
    private void runRedis(String scenario, String what, long seed, Duration on, Fault fault) throws Exception {
        String lease = scenario;
        Ledger ledger = new Ledger(new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true)
                .build(), Ledger.Check.BROKEN, lease);
        List<LeaseEngine> engines = new ArrayList<>();
        try (FaultRun run = new FaultRun(scenario, "redis", LeaseKind.EFFICIENCY, ledger)) {
            List<LeaseWorker> workers = new ArrayList<>();
            for (int w = 1; w <= 3; w++) {
                LeaseEngine engine = ZooKeeperHolder.engine(new RedisLeaseBackend(connectionFactory(), "lease:"),
                        LeaseKind.EFFICIENCY);
                engines.add(engine);
                workers.add(run.worker(w, engine, new LeaseWorker.Config(lease, LeaseKind.EFFICIENCY, TTL, seconds(3),
                        HOLD, seed)));
            }
            for (int round = 0; round < Soak.rounds(2); round++) {
                await().atMost(BOUND).pollInterval(POLL).until(() -> workers.stream().anyMatch(LeaseWorker::holding));
                Undo undo = fault.inject();
                run.fault(what, System.nanoTime());
                // For a set time, not until nobody holds: the holder must still believe it holds when the server is
                // back, or no overlap can ever happen.
                Thread.sleep(on.toMillis());
                undo.run();
                long upAt = System.nanoTime();
                await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(upAt, -1));
            }
            run.finish();
        }
        finally {
            engines.forEach(LeaseEngine::close);
        }
    }

    private LettuceConnectionFactory connectionFactory() {
        LettuceConnectionFactory factory = redis.connectionFactory();
        factories.add(factory);
        return factory;
    }

    @FunctionalInterface
    private interface Fault {
        Undo inject() throws Exception;
    }

    @FunctionalInterface
    private interface Undo {
        void run() throws Exception;
    }
}
