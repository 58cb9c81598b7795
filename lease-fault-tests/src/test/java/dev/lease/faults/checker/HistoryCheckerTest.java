package dev.lease.faults.checker;

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

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.faults.workload.Worker;
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
     * Holder 0 loses its lease (no RELEASE: its section ended with the loss) and is interrupted only after holder 1 was
     * granted the same name: they held at once, which a count that drops sections without a RELEASE never sees.
     */
    @Test
    void aHolderWhoseSectionEndedWithoutAReleaseOverlapsUntilItsLastKnownTime() {
        History history = new History();
        history.invoke(1, 0, Kind.ACQUIRE, 100);
        history.complete(1, Outcome.OK, 0, 110, null);
        history.invoke(2, 1, Kind.ACQUIRE, 120);
        history.complete(2, Outcome.OK, 0, 200, null);
        history.interrupted(0, 250);
        history.invoke(3, 1, Kind.WRITE, 210);
        history.complete(3, Outcome.OK, 0, 220, null);
        history.invoke(4, 1, Kind.RELEASE, 230);
        history.complete(4, Outcome.OK, 0, 240, null);
        assertThat(HistoryChecker.check("no-release", history, List.of(new HistoryChecker.Accepted(1, 0, 3)), false)
                .overlaps()).as("overlaps").isEqualTo(1);

        // The same with holder 0's write still in flight at the end: it held until the end of the run.
        History pending = new History();
        pending.invoke(1, 0, Kind.ACQUIRE, 100);
        pending.complete(1, Outcome.OK, 0, 110, null);
        pending.invoke(2, 0, Kind.WRITE, 150);
        pending.invoke(3, 1, Kind.ACQUIRE, 120);
        pending.complete(3, Outcome.OK, 0, 900, null);
        assertThat(HistoryChecker.check("no-release-pending", pending, List.of(), false).overlaps()).as("overlaps")
                .isEqualTo(1);
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

    /** One op of a hand-made history, invoked at {@code from} and completed at {@code to}. */
    private static void op(History history, long id, int worker, Kind kind, long from, long to, Outcome outcome,
            long token) {
        history.invoke(id, worker, kind, from);
        history.complete(id, outcome, token, to, null);
    }

    private static HistoryChecker.Accepted row(long seq, long token, long writeId) {
        return new HistoryChecker.Accepted(seq, token, writeId);
    }

    /**
     * Worker 0 holds token 1 and writes; worker 1 takes over with token 2, and worker 0's second write, frozen since
     * before the takeover, is refused once worker 1 wrote. Each reconciliation case below breaks it in one place.
     */
    private static History takeover() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 1);
        op(history, 3, 1, Kind.ACQUIRE, 140, 200, Outcome.OK, 2);
        op(history, 4, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        op(history, 5, 0, Kind.WRITE, 150, 230, Outcome.FAIL, 1);
        return history;
    }

    private static final List<HistoryChecker.Accepted> TAKEOVER = List.of(row(1, 1, 2), row(2, 2, 4));

    @Test
    void aReconciledHistoryPasses() {
        HistoryChecker.Verdict verdict = HistoryChecker.check("reconciled", takeover(), TAKEOVER, true);
        assertThat(verdict.problems()).isEmpty();
        assertThat(verdict.writesRejected()).isEqualTo(1);
    }

    @Test
    void aRowOfAWriteTheHistoryDoesNotKnowIsCaught() {
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 2, 4), row(3, 2, 99));
        assertThat(HistoryChecker.check("unknown-row", takeover(), table, true).problems())
                .containsExactly("row 3 (token 2) is write 99, which the history does not know");
    }

    @Test
    void aRowWhoseTokenIsNotTheOneItsWriteCarriedIsCaught() {
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 3, 4));
        assertThat(HistoryChecker.check("token-mismatch", takeover(), table, true).problems())
                .containsExactly("row 2 holds token 3 for write 4, which carried token 2");
    }

    @Test
    void aRowOfARefusedWriteIsCaught() {
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 1, 5), row(3, 2, 4));
        assertThat(HistoryChecker.check("refused-row", takeover(), table, true).problems())
                .containsExactly("row 2 is write 5 (token 1), which its worker saw refused");
    }

    @Test
    void aRefusalWithNoHigherTokenAcceptedBeforeItIsCaught() {
        History alone = new History();
        op(alone, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(alone, 2, 0, Kind.WRITE, 120, 130, Outcome.FAIL, 1);
        assertThat(HistoryChecker.check("unjustified", alone, List.of(), true).problems())
                .as("nothing above token 1 anywhere").containsExactly(
                        "write 2 with token 1 was refused, but no higher token had reached the fence before");

        History late = new History();
        op(late, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(late, 2, 0, Kind.WRITE, 120, 130, Outcome.FAIL, 1);
        op(late, 3, 1, Kind.ACQUIRE, 140, 200, Outcome.OK, 2);
        op(late, 4, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        assertThat(HistoryChecker.check("refused-too-early", late, List.of(row(1, 2, 4)), true).problems())
                .as("the higher token was written only after the refusal").containsExactly(
                        "write 2 with token 1 was refused, but no higher token had reached the fence before");
    }

    @Test
    void withFenceAtGrantARefusalIsJustifiedByAHigherGrantInvokedBeforeIt() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 3, 0, Kind.WRITE, 150, 210, Outcome.FAIL, 1);
        assertThat(HistoryChecker.check("refused-at-grant", history, List.of(), true, true).problems()).isEmpty();
        assertThat(HistoryChecker.check("refused-without-fence-at-grant", history, List.of(), true, false).problems())
                .containsExactly("write 3 with token 1 was refused, but no higher token had reached the fence before");

        History late = new History();
        op(late, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(late, 2, 0, Kind.WRITE, 120, 130, Outcome.FAIL, 1);
        op(late, 3, 1, Kind.ACQUIRE, 140, 200, Outcome.OK, 2);
        assertThat(HistoryChecker.check("granted-after-the-refusal", late, List.of(), true, true).problems())
                .containsExactly("write 2 with token 1 was refused, but no higher token had reached the fence before"
                        + " (by a write or a grant)");
    }

    @Test
    void oneTokenWrittenByTwoWorkersIsCaughtWhenOneGrantIsMissing() {
        // Worker 1's grant of token 5 never reached the history (its child's events were lost): the grants alone
        // show no duplicate, and the table's tokens do not go down.
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 5);
        op(history, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 5);
        op(history, 3, 1, Kind.WRITE, 140, 150, Outcome.OK, 5);
        assertThat(HistoryChecker.check("one-token-two-writers", history, List.of(row(1, 5, 2), row(2, 5, 3)), true)
                .problems()).containsExactly(
                        "write 3 of worker 1 carried token 5, which the history never granted to that worker",
                        "token 5 was written by workers [0, 1]: two grants of one token");
    }

    @Test
    void anOpStillPendingAtTheEndIsCaught() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        history.invoke(2, 0, Kind.WRITE, 120);
        assertThat(HistoryChecker.check("pending", history, List.of(), true).problems())
                .containsExactly("WRITE 2 of worker 0 never completed (PENDING at the end)");
    }

    @Test
    void whatWentWrongWhileRecordingFailsTheCheck() {
        History history = takeover();
        history.complete(42, Outcome.OK, 3, 300, null);
        history.problem("worker thread w-1 still alive after the join");
        HistoryChecker.Verdict verdict = HistoryChecker.check("recording", history, TAKEOVER, true);
        assertThat(verdict.problems()).containsExactly(
                "completion of op 42 (OK, token 3) whose invocation is missing",
                "worker thread w-1 still alive after the join");
        assertThatThrownBy(() -> HistoryChecker.assertSafe(verdict, history)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("still alive after the join");
    }
    /**
     * Worker 0 holds token 1 from 110; worker 1 is granted token 2 at 200 (acknowledged then), so the store lost worker
     * 0's grant at 200 while its section still held it. Each case below ends worker 0's section another way.
     */
    private static History lostAt200() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 3, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        op(history, 4, 1, Kind.RELEASE, 230, 240, Outcome.OK, 2);
        return history;
    }

    private static final List<HistoryChecker.Accepted> SUCCESSOR_WROTE = List.of(row(1, 2, 3));

    @Test
    void aLostSectionInterruptedAfterTheLossPassesAndIsOneSample() {
        History history = lostAt200();
        history.interrupted(0, 1, 250);
        assertThat(HistoryChecker.check("interrupted-after", history, SUCCESSOR_WROTE, true).problems()).isEmpty();
        History.LossToInterrupt measure = history.lossToInterrupt(true);
        assertThat(measure.afterNanos()).containsExactly(50L);
        assertThat(measure.lostSections()).isEqualTo(1);
    }

    @Test
    void anInterruptBeforeTheStoreLostTheGrantIsCountedApartNotDropped() {
        History history = lostAt200();
        history.interrupted(0, 1, 150);
        assertThat(HistoryChecker.check("interrupted-before", history, SUCCESSOR_WROTE, true).problems()).isEmpty();
        History.LossToInterrupt measure = history.lossToInterrupt(true);
        assertThat(measure.afterNanos()).isEmpty();
        assertThat(measure.beforeNanos()).as("how long before the loss").containsExactly(50L);
    }

    @Test
    void aLostSectionReleasedNormallyAfterTheLossFails() {
        History history = lostAt200();
        op(history, 5, 0, Kind.RELEASE, 260, 270, Outcome.OK, 1);
        assertThat(HistoryChecker.check("released-after-the-loss", history, SUCCESSOR_WROTE, true).problems())
                .containsExactly("section of worker 0 with token 1 (grant 1) was released normally (RELEASE 5 OK,"
                        + " invoked at 260) after the store had lost it at 200 (grant 2 of token 2 to worker 1), never"
                        + " interrupted");
        assertThat(history.lossToInterrupt(true).neverTold()).isEqualTo(1);
    }

    @Test
    void aLostSectionNeitherInterruptedNorToldFails() {
        History history = lostAt200();
        op(history, 5, 0, Kind.RELEASE, 190, 270, Outcome.UNKNOWN, 1);
        assertThat(HistoryChecker.check("never-told", history, SUCCESSOR_WROTE, true).problems())
                .containsExactly("section of worker 0 with token 1 (grant 1) was lost at the store at 200 (grant 2 of"
                        + " token 2 to worker 1) while it held the lease, and was never interrupted nor told");
    }

    /**
     * Worker 0 is killed (SIGKILL) at 150, in its section, with a write in flight that committed: the write ends
     * UNKNOWN with the section's token and reconciles with its row, and the section, lost at 200 after the kill, ended
     * at the kill: neither "never told" nor a sample of loss → interrupt. Killed only after the loss, it still fails.
     */
    @Test
    void aHolderKilledInItsSectionEndsItThereButOnlyBeforeTheLoss() {
        History history = lostAt200();
        history.invoke(5, 0, Kind.WRITE, 140);
        history.killed(0, 150);
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 5), row(2, 2, 3));
        assertThat(HistoryChecker.check("killed", history, table, true).problems()).isEmpty();
        assertThat(history.ops()).filteredOn(o -> o.id == 5).singleElement()
                .satisfies(o -> assertThat(o.outcome).isEqualTo(Outcome.UNKNOWN))
                .satisfies(o -> assertThat(o.token).isEqualTo(1));
        assertThat(history.lossToInterrupt(true).lostSections()).isZero();

        History late = lostAt200();
        late.killed(0, 300);
        assertThat(HistoryChecker.check("killed-late", late, SUCCESSOR_WROTE, true).problems())
                .containsExactly("section of worker 0 with token 1 (grant 1) was lost at the store at 200 (grant 2 of"
                        + " token 2 to worker 1) while it held the lease, and was never interrupted nor told");
    }

    @Test
    void aLostSectionToldByLeaseLostExceptionAtItsEndPassesAndIsCountedApart() {
        History history = lostAt200();
        op(history, 5, 0, Kind.RELEASE, 260, 270, Outcome.FAIL, 1);
        assertThat(HistoryChecker.check("told-at-the-end", history, SUCCESSOR_WROTE, true).problems()).isEmpty();
        History.LossToInterrupt measure = history.lossToInterrupt(true);
        assertThat(measure.toldAtTheEnd()).isEqualTo(1);
        assertThat(measure.afterNanos()).isEmpty();
    }

    @Test
    void aSectionReleasedBeforeTheSuccessorsGrantWasNotLost() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 3, 0, Kind.RELEASE, 150, 160, Outcome.OK, 1);
        assertThat(HistoryChecker.check("handover", history, List.of(), true).problems()).isEmpty();
        assertThat(history.lossToInterrupt(true).lostSections()).isZero();
    }

    @Test
    void anInterruptCountsOnlyForTheSectionItInterrupted() {
        // Worker 0 loses token 1 to worker 1 (interrupted), then worker 1 loses token 2 to worker 2 and is never
        // told: worker 0's interrupt must not be credited to it, nor reused for the second loss.
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        history.interrupted(0, 1, 180);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 3, 2, Kind.ACQUIRE, 210, 300, Outcome.OK, 3);
        op(history, 4, 1, Kind.RELEASE, 310, 320, Outcome.OK, 2);
        History.LossToInterrupt measure = history.lossToInterrupt(true);
        assertThat(measure.beforeNanos()).containsExactly(20L);
        assertThat(measure.afterNanos()).isEmpty();
        assertThat(measure.neverTold()).isEqualTo(1);
        assertThat(HistoryChecker.check("one-interrupt-one-section", history, List.of(), true).problems())
                .containsExactly("section of worker 1 with token 2 (grant 2) was released normally (RELEASE 4 OK,"
                        + " invoked at 310) after the store had lost it at 300 (grant 3 of token 3 to worker 2), never"
                        + " interrupted");
    }

    @Test
    void aLossTheHarnessSawAtTheStoreIsTakenBeforeTheSuccessorsGrant() {
        History history = lostAt200();
        history.storeLost(0, 1, 170, "session expired");
        history.interrupted(0, 1, 150);
        assertThat(history.lossToInterrupt(true).beforeNanos()).as("measured from the expiry at 170").containsExactly(
                20L);
    }

    @Test
    void anInterruptNamingATokenItsWorkerDidNotHoldFails() {
        History history = lostAt200();
        history.interrupted(0, 7, 150);
        assertThat(HistoryChecker.check("misplaced-interrupt", history, SUCCESSOR_WROTE, true).problems())
                .containsExactly("interrupt of worker 0 with token 7 at 150 is in no section of that worker with that"
                        + " token");
    }

    /**
     * A section that swallows its interrupt: worker 0 is interrupted at 150 (before the store lost its grant) and
     * writes anyway at 160, then lets the engine report the loss. The fence and the table see nothing wrong: token 1
     * lands before token 2. Only the section property catches it.
     */
    private static History swallowedInterrupt() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        history.interrupted(0, 1, 150);
        op(history, 2, 0, Kind.WRITE, 160, 170, Outcome.OK, 1);
        op(history, 3, 0, Kind.RELEASE, 180, 190, Outcome.FAIL, 1);
        op(history, 4, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 5, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        return history;
    }

    @Test
    void aSectionThatSwallowsItsInterruptAndWritesAnywayFails() {
        History history = swallowedInterrupt();
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 2, 5));
        HistoryChecker.Verdict verdict = HistoryChecker.check("swallowed-interrupt", history, table, true);
        assertThat(verdict.staleWritesAccepted()).as("invisible to the fence").isZero();
        assertThat(verdict.problems()).containsExactly("write 2 of the section of worker 0 with token 1 (grant 1) was"
                + " invoked at 160, after its section was interrupted at 150: the section went on after its interrupt");

        // Without tokens the section goes by worker and time, and the property holds the same.
        History efficiency = new History();
        op(efficiency, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 0);
        efficiency.interrupted(0, 0, 150);
        op(efficiency, 2, 0, Kind.WRITE, 160, 170, Outcome.OK, 0);
        assertThat(HistoryChecker.check("swallowed-interrupt-efficiency", efficiency, List.of(row(1, 0, 2)), false)
                .problems()).containsExactly("write 2 of the section of worker 0 with token 0 (grant 1) was invoked at"
                        + " 160, after its section was interrupted at 150: the section went on after its interrupt");
    }

    @Test
    void aWriteInvokedBeforeTheInterruptIsNoSwallowedInterrupt() {
        History clean = new History();
        op(clean, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(clean, 2, 0, Kind.WRITE, 160, 170, Outcome.OK, 1);
        clean.interrupted(0, 1, 175); // the flag found set right after the write: the write came first
        op(clean, 3, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(clean, 4, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        assertThat(HistoryChecker.check("interrupted-during-the-write", clean, List.of(row(1, 1, 2), row(2, 2, 4)),
                true).problems()).isEmpty();
    }

    @Test
    void aForcedStaleWriteAfterTheInterruptIsExemptButMustNotBeAcceptedAfterASuccessorsWrite() {
        History refused = swallowedInterrupt();
        op(refused, 6, 0, Kind.WRITE, 230, 240, Outcome.FAIL, 1);
        refused.forced(6);
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 2, 5));
        assertThat(HistoryChecker.check("forced-refused", refused, table, true).problems())
                .as("the forced write 6 is exempt; the unforced write 2 still fails").containsExactly("write 2 of the"
                        + " section of worker 0 with token 1 (grant 1) was invoked at 160, after its section was"
                        + " interrupted at 150: the section went on after its interrupt");

        History accepted = new History();
        op(accepted, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        accepted.interrupted(0, 1, 150);
        op(accepted, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(accepted, 3, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        op(accepted, 4, 0, Kind.WRITE, 230, 240, Outcome.OK, 1);
        accepted.forced(4);
        // A broken fence took it after token 2; the property names the forced write besides the stale row.
        assertThat(HistoryChecker.check("forced-accepted", accepted, List.of(row(1, 2, 3), row(2, 1, 4)), true)
                .problems()).contains("forced write 4 with token 1 was accepted, although write 3 with token 2 had been"
                        + " acknowledged before it was invoked");
    }

    @Test
    void withoutTokensALostSectionNeverToldIsCountedNotFailed() {
        History history = new History();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 0);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 0);
        op(history, 3, 0, Kind.RELEASE, 260, 270, Outcome.OK, 0);
        op(history, 4, 1, Kind.RELEASE, 280, 290, Outcome.OK, 0);
        assertThat(HistoryChecker.check("efficiency-overlap", history, List.of(), false).problems()).isEmpty();
        assertThat(history.lossToInterrupt(false).neverTold()).isEqualTo(1);
    }

    @Test
    void holdersWithoutAnEngineAreNotJudgedBySections() {
        History history = History.withoutEngine();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(history, 3, 0, Kind.RELEASE, 260, 270, Outcome.OK, 1);
        assertThat(HistoryChecker.check("no-engine", history, List.of(), true).problems()).isEmpty();
        History engine = new History();
        op(engine, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(engine, 2, 1, Kind.ACQUIRE, 120, 200, Outcome.OK, 2);
        op(engine, 3, 0, Kind.RELEASE, 260, 270, Outcome.OK, 1);
        assertThat(HistoryChecker.check("engine", engine, List.of(), true).problems()).hasSize(1);
    }

    /**
     * The terms of one election, as {@link LeaderWorker} records them: worker 0 leads with token 1 (campaign from 100,
     * granted at 110) and writes; it is frozen right before a second write; worker 1, campaigning since 105, is granted
     * token 2 at 200 and writes; worker 0 wakes up, its forced write with token 1 is refused, and it is told that its
     * term is lost (RELEASE FAIL at 260). Worker 1 gives its term up at the end (RELEASE OK invoked at 300).
     */
    private static History termsOfOneElection() {
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 1);
        op(history, 3, 1, Kind.ACQUIRE, 105, 200, Outcome.OK, 2);
        op(history, 4, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        op(history, 5, 0, Kind.WRITE, 230, 240, Outcome.FAIL, 1);
        history.forced(5);
        history.interrupted(0, 1, 235);
        op(history, 6, 0, Kind.RELEASE, 260, 260, Outcome.FAIL, 1);
        op(history, 7, 0, Kind.ACQUIRE, 260, 400, Outcome.FAIL, -1);
        op(history, 8, 1, Kind.RELEASE, 300, 310, Outcome.OK, 2);
        return history;
    }

    private static final List<HistoryChecker.Accepted> TERMS = List.of(row(1, 1, 2), row(2, 2, 4));

    @Test
    void termsOfAnElectionWhoseFrozenLeaderWasRefusedPass() {
        HistoryChecker.Verdict verdict = HistoryChecker.check("terms", termsOfOneElection(), TERMS, true);
        assertThat(verdict.problems()).isEmpty();
        assertThat(verdict.grants()).as("terms").isEqualTo(2);
        assertThat(verdict.writesRejected()).isEqualTo(1);
        assertThat(HistoryChecker.staleWritesRefusedAfterWrite(termsOfOneElection())).isEqualTo(1);
    }

    @Test
    void twoTermsWithOneTokenFail() {
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.RELEASE, 150, 160, Outcome.FAIL, 1);
        op(history, 3, 1, Kind.ACQUIRE, 105, 200, Outcome.OK, 1);
        op(history, 4, 1, Kind.RELEASE, 300, 310, Outcome.OK, 1);
        HistoryChecker.Verdict verdict = HistoryChecker.check("one-token-two-terms", history, List.of(), true);
        assertThat(verdict.duplicateTokens()).isEqualTo(1);
        assertThat(verdict.problems()).contains("token 1 granted twice (op 3)");
    }

    @Test
    void aWriteOfAStaleTermAcceptedAfterTheNewTermsWriteFails() {
        History history = termsOfOneElection();
        history.complete(5, Outcome.OK, 1, 240, null);
        // A fence that does not compare took worker 0's token 1 after worker 1's token 2.
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 2), row(2, 2, 4), row(3, 1, 5));
        HistoryChecker.Verdict verdict = HistoryChecker.check("stale-term-accepted", history, table, true);
        assertThat(verdict.staleWritesAccepted()).isEqualTo(1);
        assertThat(verdict.problems()).contains(
                "stale write accepted: write 5 with token 1 after the table had accepted token 2",
                "forced write 5 with token 1 was accepted, although write 4 with token 2 had been acknowledged before"
                        + " it was invoked");
    }

    @Test
    void aWriteOfAStaleTermBetweenTheNewTermsGrantAndItsFirstWriteIsCountedNotFailed() {
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 1, Kind.ACQUIRE, 105, 200, Outcome.OK, 2);
        op(history, 3, 0, Kind.WRITE, 201, 210, Outcome.OK, 1);
        history.forced(3);
        op(history, 4, 0, Kind.RELEASE, 215, 215, Outcome.FAIL, 1);
        op(history, 5, 1, Kind.WRITE, 220, 230, Outcome.OK, 2);
        op(history, 6, 1, Kind.RELEASE, 300, 310, Outcome.OK, 2);
        List<HistoryChecker.Accepted> table = List.of(row(1, 1, 3), row(2, 2, 5));
        HistoryChecker.Verdict verdict = HistoryChecker.check("stale-term-in-the-window", history, table, true);
        assertThat(verdict.staleWritesAfterGrant()).isEqualTo(1);
        assertThat(verdict.problems()).as("the window a fence alone leaves open").isEmpty();
        assertThat(HistoryChecker.check("stale-term-in-the-window-fenced-at-grant", history, table, true, true)
                .problems()).containsExactly("stale write accepted after a successor's grant: write 3 with token 1"
                        + " was invoked after grant 2 of token 2 had been acknowledged");
    }

    /**
     * Worker 0 and worker 1 both hold token 5 (a store that repeated a token), and their writes alternate at the
     * resource: the table's tokens never go down, so only the duplicate and the interleaving show it.
     */
    @Test
    void termsThatOverlapAtTheResourceFail() {
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 5);
        op(history, 2, 1, Kind.ACQUIRE, 105, 120, Outcome.OK, 5);
        op(history, 3, 0, Kind.WRITE, 130, 140, Outcome.OK, 5);
        op(history, 4, 1, Kind.WRITE, 150, 160, Outcome.OK, 5);
        op(history, 5, 0, Kind.WRITE, 170, 180, Outcome.OK, 5);
        op(history, 6, 0, Kind.RELEASE, 200, 210, Outcome.OK, 5);
        op(history, 7, 1, Kind.RELEASE, 200, 210, Outcome.OK, 5);
        List<HistoryChecker.Accepted> table = List.of(row(1, 5, 3), row(2, 5, 4), row(3, 5, 5));
        HistoryChecker.Verdict verdict = HistoryChecker.check("overlapping-terms", history, table, true);
        assertThat(verdict.staleWritesAccepted()).as("invisible to the table's order").isZero();
        assertThat(verdict.interleavedSections()).isEqualTo(1);
        assertThat(verdict.problems()).contains("row 3 (write 5) of the term of worker 0 with token 5 came after row 2"
                + " of the term of worker 1 with token 5, which came after the first term's earlier rows: the two terms"
                + " overlapped at the resource");
    }

    @Test
    void termsThatFollowOneAnotherAtTheResourcePass() {
        // Worker 0 writes twice in its term, then worker 1 twice in its own: one block each, in token order.
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 1);
        op(history, 3, 0, Kind.WRITE, 140, 150, Outcome.OK, 1);
        op(history, 4, 0, Kind.RELEASE, 160, 170, Outcome.OK, 1);
        op(history, 5, 1, Kind.ACQUIRE, 105, 180, Outcome.OK, 2);
        op(history, 6, 1, Kind.WRITE, 190, 200, Outcome.OK, 2);
        op(history, 7, 1, Kind.WRITE, 210, 220, Outcome.OK, 2);
        op(history, 8, 1, Kind.RELEASE, 230, 240, Outcome.OK, 2);
        HistoryChecker.Verdict verdict = HistoryChecker.check("terms-in-order", history,
                List.of(row(1, 1, 2), row(2, 1, 3), row(3, 2, 6), row(4, 2, 7)), true);
        assertThat(verdict.problems()).isEmpty();
        assertThat(verdict.interleavedSections()).isZero();
    }

    @Test
    void aTermThatNeverEndedFailsOnlyInAHistoryOfTerms() {
        History terms = History.ofTerms();
        op(terms, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(terms, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 1);
        assertThat(HistoryChecker.check("term-never-ended", terms, List.of(row(1, 1, 2)), true).problems())
                .containsExactly("the term of worker 0 with token 1 (grant 1) never ended before the worker's next term"
                        + " or the end of the run: no revoked event, or a term granted while another was open");

        History sections = new History();
        op(sections, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(sections, 2, 0, Kind.WRITE, 120, 130, Outcome.OK, 1);
        assertThat(HistoryChecker.check("section-not-judged", sections, List.of(row(1, 1, 2)), true).problems())
                .as("a hand-made history of sections need not say how they ended").isEmpty();
    }

    @Test
    void aTermGrantedWhileTheSameInstancesTermWasOpenFails() {
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.ACQUIRE, 120, 130, Outcome.OK, 2);
        op(history, 3, 0, Kind.RELEASE, 140, 150, Outcome.OK, 2);
        assertThat(HistoryChecker.check("two-terms-at-once", history, List.of(), true).problems())
                .containsExactly("the term of worker 0 with token 1 (grant 1) never ended before the worker's next term"
                        + " or the end of the run: no revoked event, or a term granted while another was open");
    }

    @Test
    void anInterruptSeenAfterTheWorkersNextTermBeganBelongsToTheTermItNames() {
        // Worker 0's work thread reports the interrupt of its term 1 at 450, after its campaign thread recorded the
        // term's end (300) and its next term's grant (400).
        History history = History.ofTerms();
        op(history, 1, 0, Kind.ACQUIRE, 100, 110, Outcome.OK, 1);
        op(history, 2, 0, Kind.RELEASE, 300, 300, Outcome.FAIL, 1);
        op(history, 3, 0, Kind.ACQUIRE, 300, 400, Outcome.OK, 3);
        history.interrupted(0, 1, 450);
        op(history, 4, 0, Kind.RELEASE, 500, 510, Outcome.OK, 3);
        HistoryChecker.Verdict verdict = HistoryChecker.check("late-interrupt", history, List.of(), true);
        assertThat(verdict.problems()).isEmpty();
        assertThat(history.sections(true).all()).first().satisfies(term -> assertThat(term.interruptedAt())
                .isEqualTo(450L));
    }
}
