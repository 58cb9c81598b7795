package dev.lease.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import dev.lease.faults.History.Kind;
import dev.lease.faults.History.Outcome;
import dev.lease.memory.InMemoryLeaseBackend;

/** The checker must catch what it claims to catch, starting with a fence that forgot to compare tokens. */
class HistoryCheckerTest {

    /** The table of {@link #staleWriteBetweenTheSuccessorsGrantAndItsWrite()}: write 3 (token 1), write 4 (token 2). */
    private static final List<HistoryChecker.Accepted> STALE_THEN_SUCCESSOR = List.of(
            new HistoryChecker.Accepted(1, 1, 3), new HistoryChecker.Accepted(2, 2, 4));

    private final DataSource db = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
            .generateUniqueName(true).build();

    private final FrozenHolderWorkload.Config pausing = new FrozenHolderWorkload.Config(4, 25,
            Duration.ofMillis(150), 0.25, Duration.ofMillis(400), 7);

    @Test
    void aCorrectFenceRejectsEveryStaleWriteOfFrozenHolders() throws Exception {
        Ledger ledger = new Ledger(db, Ledger.Check.FENCED, "fenced");
        History history = FrozenHolderWorkload.run(new InMemoryLeaseBackend(), "fenced", ledger, pausing);
        HistoryChecker.Verdict verdict = HistoryChecker.check("fenced", history, ledger.accepted(), true);
        HistoryChecker.assertSafe(verdict, history);
        assertThat(verdict.staleWritesAccepted()).isZero();
        assertThat(verdict.writesRejected()).as("stale writes the fence refused").isPositive();
        assertThat(verdict.writesAccepted()).isPositive();
    }

    @Test
    void aBrokenFenceIsCaughtAndTheHistoryIsDumped() throws Exception {
        Ledger ledger = new Ledger(db, Ledger.Check.BROKEN, "broken");
        History history = FrozenHolderWorkload.run(new InMemoryLeaseBackend(), "broken", ledger, pausing);
        HistoryChecker.Verdict verdict = HistoryChecker.check("broken-fence", history, ledger.accepted(), true);
        assertThat(verdict.staleWritesAccepted()).isPositive();
        assertThatThrownBy(() -> HistoryChecker.assertSafe(verdict, history)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("stale write accepted");
        assertThat(Files.readString(Path.of("target", "fault-histories", "broken-fence.json"))).contains("\"WRITE\"");
    }

    @Test
    void duplicateTokensAndGrantsOutOfRealTimeOrderAreCaught() {
        History history = new History();
        History.Op first = history.invoke(0, Kind.ACQUIRE);
        history.complete(first, Outcome.OK, 5, null);
        History.Op second = history.invoke(1, Kind.ACQUIRE);
        history.complete(second, Outcome.OK, 5, null);
        History.Op third = history.invoke(2, Kind.ACQUIRE);
        history.complete(third, Outcome.OK, 3, null);
        HistoryChecker.Verdict verdict = HistoryChecker.check("grants", history, List.of(), true);
        assertThat(verdict.duplicateTokens()).isEqualTo(1);
        assertThat(verdict.grantsOutOfOrder()).isEqualTo(2);
    }

    /**
     * Holder 0 (token 1) writes after holder 1's grant of token 2 was acknowledged, before holder 1's write: the table
     * accepts both in token order, so only the measure against grants sees it.
     */
    private static History staleWriteBetweenTheSuccessorsGrantAndItsWrite() {
        History history = new History();
        history.invoke(1, 0, Kind.ACQUIRE, 100);
        history.complete(1, Outcome.OK, 1, 110, null);
        history.invoke(2, 1, Kind.ACQUIRE, 120);
        history.complete(2, Outcome.OK, 2, 200, null);
        history.invoke(3, 0, Kind.WRITE, 201);
        history.complete(3, Outcome.OK, 1, 210, null);
        history.invoke(4, 1, Kind.WRITE, 220);
        history.complete(4, Outcome.OK, 2, 230, null);
        return history;
    }

    @Test
    void aStaleWriteAfterTheSuccessorsGrantIsCountedButFailsOnlyWithFenceAtGrant() {
        History history = staleWriteBetweenTheSuccessorsGrantAndItsWrite();
        HistoryChecker.Verdict fenceOnly = HistoryChecker.check("grant-window", history, STALE_THEN_SUCCESSOR, true);
        assertThat(fenceOnly.staleWritesAccepted()).as("after a successor's write").isZero();
        assertThat(fenceOnly.staleWritesAfterGrant()).isEqualTo(1);
        assertThat(fenceOnly.safe()).as("without fence at grant the window is reported, not a failure").isTrue();

        HistoryChecker.Verdict atGrant = HistoryChecker.check("grant-window-fenced-at-grant", history,
                STALE_THEN_SUCCESSOR, true, true);
        assertThat(atGrant.staleWritesAfterGrant()).isEqualTo(1);
        assertThatThrownBy(() -> HistoryChecker.assertSafe(atGrant, history)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("stale write accepted after a successor's grant: write 3 with token 1");
    }

    @Test
    void aWriteConcurrentWithTheSuccessorsGrantIsNotCounted() {
        History history = new History();
        history.invoke(1, 0, Kind.ACQUIRE, 100);
        history.complete(1, Outcome.OK, 1, 110, null);
        history.invoke(2, 1, Kind.ACQUIRE, 120);
        // Invoked before the grant was acknowledged: the table may have accepted it before the grant.
        history.invoke(3, 0, Kind.WRITE, 199);
        history.complete(2, Outcome.OK, 2, 200, null);
        history.complete(3, Outcome.OK, 1, 210, null);
        history.invoke(4, 1, Kind.WRITE, 220);
        history.complete(4, Outcome.OK, 2, 230, null);
        HistoryChecker.Verdict verdict = HistoryChecker.check("concurrent", history, STALE_THEN_SUCCESSOR, true, true);
        assertThat(verdict.staleWritesAfterGrant()).isZero();
        assertThat(verdict.safe()).isTrue();
    }

    @Test
    void anAcknowledgedWriteMissingFromTheTableIsCaught() {
        History history = new History();
        History.Op write = history.invoke(0, Kind.WRITE);
        history.complete(write, Outcome.OK, 1, null);
        HistoryChecker.Verdict verdict = HistoryChecker.check("lost", history, List.of(), true);
        assertThat(verdict.acknowledgedWritesLost()).isEqualTo(1);
        assertThat(verdict.safe()).isFalse();
    }
}
