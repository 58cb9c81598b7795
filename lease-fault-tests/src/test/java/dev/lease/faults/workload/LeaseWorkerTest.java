package dev.lease.faults.workload;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.fence.JdbcFence;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.PostgresServer;

/** The worker must record the interrupts it cannot act on at once, or the loss → interrupt figures miss them. */
class LeaseWorkerTest {

    private static final String LEASE = "worker-write";

    /**
     * A write that failed on a socket timeout (a slow or crashed resource database) was not interrupted: recorded as
     * an interrupt, the checker saw its leader section "go on after its interrupt" (seed -3575903555363029226).
     */
    @Test
    void onlyRealInterruptsCountAsInterruptedWrites() {
        Exception timedOut = new org.springframework.transaction.TransactionSystemException("JDBC commit failed",
                new java.sql.SQLException("An I/O error occurred", "08006",
                        new java.net.SocketTimeoutException("Read timed out")));
        assertThat(SectionWork.causedByInterrupt(timedOut)).isFalse();
        assertThat(SectionWork.causedByInterrupt(new RuntimeException(new java.io.InterruptedIOException()))).isTrue();
        assertThat(SectionWork.causedByInterrupt(new RuntimeException(new InterruptedException()))).isTrue();
        assertThat(SectionWork.causedByInterrupt(new RuntimeException(
                new java.nio.channels.ClosedByInterruptException()))).isTrue();
    }

    /**
     * The lease is lost while the worker's write waits for a row lock: the interrupt cannot stop the write, so it must
     * show right after it, as an interrupt of that section. PostgreSQL, as in the scenarios: its driver neither stops
     * a statement for an interrupt nor clears the flag. (H2 does both: it turns the interrupt into a lock timeout, and
     * the holder then learns of its loss only from LeaseLostException when its work returns.)
     */
    @Test
    void anInterruptThatArrivesDuringTheWriteIsRecordedForItsSection() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            DataSource db = postgres.dataSource();
            Ledger ledger = new Ledger(db, Ledger.Check.FENCED, LEASE);
            new JdbcTemplate(db).update("INSERT INTO " + JdbcFence.TABLE + " (resource, fence) VALUES (?, 0)", LEASE);
            InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
            History history = new History();
            try (LeaseEngine engine = ZooKeeperHolder.engine(backend, LeaseKind.CORRECTNESS);
                    Connection blocker = db.getConnection()) {
                blocker.setAutoCommit(false);
                try (Statement lock = blocker.createStatement()) {
                    lock.executeUpdate("UPDATE " + JdbcFence.TABLE + " SET fence = fence WHERE resource = '" + LEASE
                            + "'");
                }
                LeaseWorker worker = new LeaseWorker(1, engine, ledger, new LeaseWorker.Config(LEASE,
                        LeaseKind.CORRECTNESS, Duration.ofMillis(600), seconds(5), Duration.ZERO, 1),
                        EventSink.of(history, 1));
                Thread thread = new Thread(worker, "lease-worker-test");
                thread.start();
                try {
                    await().atMost(seconds(30)).until(() -> writeOf(history), op -> op != null);
                    assertThat(backend.revoke(LEASE)).as("the worker held the lease").isTrue();
                    // The next renewal finds the grant gone, and the engine interrupts the writer.
                    await().atMost(seconds(30)).until(thread::isInterrupted);
                    worker.stop();
                }
                finally {
                    blocker.rollback();
                }
                thread.join(seconds(30).toMillis());
                assertThat(thread.isAlive()).isFalse();
            }
            Op write = writeOf(history);
            assertThat(history.interrupts()).singleElement().satisfies(interrupt -> {
                assertThat(interrupt.token()).as("the token of the section interrupted").isEqualTo(write.token);
                assertThat(interrupt.at() - write.completedAt).as("seen once the write was done").isNotNegative();
            });
            assertThat(history.sections(true).all()).singleElement().satisfies(section -> {
                assertThat(section.interruptedAt()).isNotNull();
                assertThat(section.writes()).containsExactly(write);
                assertThat(section.release()).as("the section ended with the lease lost").isNotNull()
                        .extracting(op -> op.outcome).isEqualTo(History.Outcome.FAIL);
            });
            HistoryChecker.Verdict verdict = HistoryChecker.check("worker-write", history, ledger.accepted(), true);
            assertThat(verdict.problems()).as("a write invoked before its interrupt is no swallowed interrupt")
                    .isEmpty();
        }
    }

    private static Op writeOf(History history) {
        return history.ops().stream().filter(op -> op.kind == Kind.WRITE).findFirst().orElse(null);
    }
}
