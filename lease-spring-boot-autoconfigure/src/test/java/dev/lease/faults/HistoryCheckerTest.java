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
