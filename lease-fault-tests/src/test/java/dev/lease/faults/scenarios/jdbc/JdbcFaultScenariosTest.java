package dev.lease.faults.scenarios.jdbc;

import static dev.lease.faults.harness.StaleWrites.pauseUntilTakenOver;
import static org.awaitility.Awaitility.await;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.workload.FrozenWrite;
import dev.lease.faults.workload.HeldAfterGrant;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.TcpProxy;

/**
 * Fault scenarios on the JDBC backend over PostgreSQL that strike the database and its connections: killed
 * connections, a frozen link to the lease store, a database restart and a seeded random mix.
 */
class JdbcFaultScenariosTest extends JdbcScenarios {

    @Test
    void connectionKill() throws Exception {
        String lease = "jdbc-kill";
        try (FaultRun run = new FaultRun("jdbc-connection-kill", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 2);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 2)),
                    run.worker(2, two, config(lease, TTL, 2)));
            StaleWrites.pausedAcross(run, child, workers, "pg_terminate_backend of every holder connection", () -> {
                new JdbcTemplate(postgres.dataSource()).queryForObject(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
                        Integer.class, HOLDERS);
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                killConnectionsWhileHeld(run, workers);
            }
            run.finish();
        }
    }

    /**
     * A holder whose link to the lease store goes silent (a frozen network, a driver without a socket timeout: its
     * renewal waits for ever) while its link to the resource still works must stop on its own clock: frozen while it
     * stands in its section, it is interrupted before its successor was granted and a ttl more, while the link is
     * still frozen. Without the local deadline ({@link Mutant#NO_LOCAL_DEADLINE}) it would run on until the network
     * came back. A first round freezes a holder right before its write as well, so that a stale write reaches the
     * fence.
     */
    @Test
    void frozenLinkToTheLeaseStore() throws Exception {
        frozenLink("jdbc-frozen-store-link", "jdbc (PostgreSQL)", "jdbc-frozen-link", JdbcScenarios::ledger);
    }

    /** The frozen store link, its ledger made by {@code ledger} from the lease name: JdbcFence's, or a JPA workload's. */
    static void frozenLink(String scenario, String backend, String lease,
            java.util.function.Function<String, Ledger> ledger) throws Exception {
        try (FaultRun run = new FaultRun(scenario, backend, LeaseKind.CORRECTNESS, ledger.apply(lease));
                TcpProxy link1 = new TcpProxy(postgres.port());
                TcpProxy link2 = new TcpProxy(postgres.port());
                LeaseEngine one = engineThrough(link1); LeaseEngine two = engineThrough(link2)) {
            FrozenWrite gate = new FrozenWrite(run.history);
            HeldAfterGrant inSection = HeldAfterGrant.disarmed();
            List<LeaseWorker> workers = List.of(
                    run.worker(1, one, config(lease, TTL, 6), gate.of(1).then(inSection)),
                    run.worker(2, two, config(lease, TTL, 6), gate.of(2).then(inSection)));
            List<TcpProxy> links = List.of(link1, link2);
            StaleWrites.frozenAcross(run, gate, "froze the holder's link to the lease store", victim -> {
                links.get(victim - 1).freeze();
                return () -> links.get(victim - 1).unfreeze();
            });
            for (int round = 0; round < Soak.rounds(2); round++) {
                inSection.arm();
                inSection.awaitHeld();
                int victim = workers.get(0).holding() ? 1 : 2;
                TcpProxy link = links.get(victim - 1);
                link.freeze();
                long frozenAt = System.nanoTime();
                run.fault("froze the link of worker " + victim + " to the lease store while it stood in its section",
                        frozenAt);
                try {
                    await().atMost(BOUND).pollInterval(POLL).until(() -> run.grantedSince(frozenAt, victim));
                    assertInterruptedSince(run, victim, frozenAt);
                }
                finally {
                    inSection.release();
                    link.unfreeze();
                }
            }
            run.finish();
        }
    }

    @Test
    void databaseRestart() throws Exception {
        String lease = "jdbc-restart";
        try (FaultRun run = new FaultRun("jdbc-database-restart", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS,
                ledger(lease)); LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 3);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 3)),
                    run.worker(2, two, config(lease, TTL, 3)));
            StaleWrites.pausedAcross(run, child, workers, "stopped PostgreSQL and started it again", () -> {
                postgres.stop();
                postgres.restart();
                return StaleWrites.Undo.NOTHING;
            });
            for (int round = 0; round < Soak.rounds(1); round++) {
                restartWhileHeld(run, workers);
            }
            run.finish();
        }
    }

    @Test
    void randomMix() throws Exception {
        String lease = "jdbc-mix";
        Random random = new Random(Seeds.of("jdbc-random-mix"));
        try (FaultRun run = new FaultRun("jdbc-random-mix", "jdbc (PostgreSQL)", LeaseKind.CORRECTNESS, ledger(lease));
                LeaseEngine one = engine(); LeaseEngine two = engine()) {
            ChildHolder child = pausedChild(run, lease, TTL, 5);
            List<LeaseWorker> workers = List.of(run.worker(1, one, config(lease, TTL, 5)),
                    run.worker(2, two, config(lease, TTL, 5)));
            StaleWrites.pausedAcross(run, child, workers, "nothing else", () -> StaleWrites.Undo.NOTHING);
            for (int round = 0; round < Soak.rounds(3); round++) {
                switch (random.nextInt(3)) {
                    case 0 -> pauseUntilTakenOver(run, child);
                    case 1 -> killConnectionsWhileHeld(run, workers);
                    default -> restartWhileHeld(run, workers);
                }
            }
            run.finish();
        }
    }
}
