package dev.lease.faults.workload;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * The leadership workload records terms as the election hands them out: two instances on one in-memory store, a term
 * taken away at the store (told: RELEASE FAIL), a term given up by standing by (RELEASE OK) and taken over by the
 * other instance, and a history that passes the check with every term ended.
 */
class LeaderWorkerTest {

    private static final String ELECTION = "leader-worker-terms";

    private final DataSource db = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
            .generateUniqueName(true).build();

    @Test
    void termsAreRecordedAsTheyAreGrantedLostAndGivenUp() throws Exception {
        Ledger ledger = new Ledger(db, Ledger.Check.FENCED, ELECTION);
        InMemoryLeaseBackend store = new InMemoryLeaseBackend();
        History history = History.ofTerms();
        LeaseWorker.Config config = new LeaseWorker.Config(ELECTION, LeaseKind.CORRECTNESS, Duration.ofSeconds(2),
                seconds(5), Duration.ofMillis(20), 3);
        List<Thread> threads = new ArrayList<>();
        try (LeaseEngine one = ZooKeeperHolder.engine(store, LeaseKind.CORRECTNESS);
                LeaseEngine two = ZooKeeperHolder.engine(store, LeaseKind.CORRECTNESS)) {
            List<LeaderWorker> workers = List.of(
                    new LeaderWorker(1, one, ledger, config, EventSink.of(history, 1), LeaseWorker.BeforeWrite.NONE),
                    new LeaderWorker(2, two, ledger, config, EventSink.of(history, 2), LeaseWorker.BeforeWrite.NONE));
            try {
                threads.add(start(workers.get(0)));
                await().atMost(seconds(10)).until(() -> acceptedWrites(history, 1) > 0);
                threads.add(start(workers.get(1)));
                long first = lastGrant(history).token;

                // Taken away at the store: the leader is told, and a new term follows with a higher token.
                assertThat(store.revoke(ELECTION)).isTrue();
                await().atMost(seconds(10)).until(() -> lastGrant(history).token > first);
                assertThat(history.ops()).anySatisfy(op -> {
                    assertThat(op.kind).isEqualTo(Kind.RELEASE);
                    assertThat(op.worker).isEqualTo(1);
                    assertThat(op.outcome).isEqualTo(Outcome.FAIL);
                    assertThat(op.token).isEqualTo(first);
                });

                // Given up: the other instance takes over at once, with a higher token.
                Op current = lastGrant(history);
                LeaderWorker leader = workers.get(current.worker - 1);
                leader.standBy(true);
                int other = current.worker == 1 ? 2 : 1;
                await().atMost(seconds(10)).until(() -> lastGrant(history).worker == other
                        && lastGrant(history).token > current.token && acceptedWrites(history, other) > 0);
                assertThat(leader.holding()).isFalse();
                leader.standBy(false);
            }
            finally {
                workers.forEach(LeaderWorker::stop);
                for (Thread thread : threads) {
                    thread.join(seconds(30).toMillis());
                    assertThat(thread.isAlive()).as(thread.getName() + " ended").isFalse();
                }
            }
        }
        HistoryChecker.Verdict verdict = HistoryChecker.check("leader-worker", history, ledger.accepted(), true);
        assertThat(verdict.problems()).isEmpty();
        assertThat(verdict.grants()).as("terms").isGreaterThanOrEqualTo(3);
        assertThat(history.ops()).filteredOn(op -> op.kind == Kind.RELEASE && op.ok()).as("terms given up")
                .isNotEmpty();
        assertThat(history.ops()).filteredOn(op -> op.kind == Kind.ACQUIRE && op.outcome == Outcome.FAIL)
                .as("campaigns closed without a term").allSatisfy(op -> assertThat(op.detail)
                        .startsWith("the campaign ended without a term"));
    }

    private static Thread start(LeaderWorker worker) {
        Thread thread = new Thread(worker, "leader-worker-test-" + System.identityHashCode(worker));
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static long acceptedWrites(History history, int worker) {
        return history.ops().stream().filter(op -> op.kind == Kind.WRITE && op.worker == worker && op.ok()).count();
    }

    private static Op lastGrant(History history) {
        return history.ops().stream().filter(op -> op.kind == Kind.ACQUIRE && op.ok())
                .max(java.util.Comparator.comparingLong(op -> op.completedAt)).orElseThrow();
    }
}
