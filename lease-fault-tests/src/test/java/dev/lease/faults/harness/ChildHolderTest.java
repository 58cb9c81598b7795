package dev.lease.faults.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.Writer;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;

import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;

/** A child's event stream must never vanish silently: what cannot be read is a problem of the run. */
class ChildHolderTest {

    private final History history = new History();

    private void feed(String... lines) throws IOException {
        ChildHolder.Events events = new ChildHolder.Events("c", 1, history);
        events.read(new BufferedReader(new StringReader(String.join("\n", lines) + "\n")), Writer.nullWriter());
        events.ended();
    }

    @Test
    void aCleanStreamRecordsItsOpsAndNoProblem() throws IOException {
        feed("@@ READY", "some logging", "@@ INV 1000000001 ACQUIRE 100", "@@ END 1000000001 ACQUIRE OK 7 110 ",
                "@@ INV 1000000002 WRITE 120", "@@ END 1000000002 WRITE FAIL 7 130 stale token refused by the fence",
                "@@ BYE");
        assertThat(history.problems()).isEmpty();
        assertThat(history.ops()).extracting(op -> op.kind + " " + op.outcome + " " + op.token)
                .containsExactly("ACQUIRE OK 7", "WRITE FAIL 7");
        assertThat(history.ops().get(1).detail).isEqualTo("stale token refused by the fence");
    }

    @Test
    void aMalformedLineIsAProblemAndReadingGoesOn() throws IOException {
        feed("@@ READY", "@@ INV 1000000001 ACQUIRE 100", "@@ END 1000000001 ACQUIRE OK seven 110 ",
                "@@ INV 1000000002 ACQUIRE", "@@ FOO 1", "@@ INV 1000000003 ACQUIRE 200",
                "@@ END 1000000003 ACQUIRE OK 8 210 ", "@@ BYE");
        assertThat(history.problems()).hasSize(3).allMatch(p -> p.startsWith("child holder c sent a malformed event"
                + " line '@@ "));
        assertThat(history.ops()).as("the grant after the bad lines is still recorded")
                .anyMatch(op -> op.id == 1000000003L && op.ok() && op.token == 8);
        assertThat(HistoryChecker.check("malformed", history, List.of(), true).safe()).isFalse();
    }

    @Test
    void aStreamThatEndsBeforeItsByeIsAProblem() throws IOException {
        feed("@@ READY", "@@ INV 1000000001 ACQUIRE 100", "@@ END 1000000001 ACQUIRE OK 7 110 ");
        assertThat(history.problems()).containsExactly("the event stream of child holder c ended before its BYE: the"
                + " events it did not send are missing from the history");
        assertThat(history.ops()).extracting(op -> op.outcome).containsExactly(Outcome.OK);
    }

    @Test
    void anEventGluedToOtherOutputIsReadAndIsAProblem() throws IOException {
        feed("@@ READY", "WARNING: half a line@@ INV 1000000001 WRITE 100", "@@ END 1000000001 WRITE OK 7 110 ",
                "@@ BYE");
        assertThat(history.problems()).containsExactly("child holder c sent an event glued to other output: "
                + "'WARNING: half a line@@ INV 1000000001 WRITE 100'");
        assertThat(history.ops()).extracting(op -> op.kind).containsExactly(Kind.WRITE);
    }
    @Test
    void anInterruptNamesItsSectionAndAForcedWriteIsMarked() throws IOException {
        feed("@@ READY", "@@ INV 1000000001 ACQUIRE 100", "@@ END 1000000001 ACQUIRE OK 7 110 ", "@@ INT 150 7",
                "@@ INV 1000000002 WRITE 160", "@@ FORCED 1000000002", "@@ END 1000000002 WRITE FAIL 7 170 refused",
                "@@ INT 180", "@@ BYE");
        assertThat(history.problems()).isEmpty();
        assertThat(history.interrupts()).containsExactly(new History.Interrupt(1, 7, 150),
                new History.Interrupt(1, History.UNKNOWN_TOKEN, 180));
        assertThat(history.ops().get(1).forced).isTrue();
    }
}
