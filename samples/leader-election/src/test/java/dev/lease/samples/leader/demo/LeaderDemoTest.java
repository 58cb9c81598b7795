package dev.lease.samples.leader.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.samples.leader.Reminders;
import dev.lease.testing.TestTiming;

/**
 * Runs the whole demo in this JVM, as {@code spring-boot:run} does, and checks that it saw no problem, then that its
 * story holds on the record: a refused stale write, a paused relay's commit refused by the broker, interrupted runs,
 * every batch in the outbox once, and every message sent once to a {@code read_committed} consumer of the topic.
 */
class LeaderDemoTest {

    @Test
    void oneLeaderAtATimeTheInterruptStopsAFrozenLeaderAndTheFencesAPausedOne() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        // Longer sessions on a slow machine: a healthy leader must not lose its term to a CPU stall.
        String session = TestTiming.seconds(4).toMillis() + "ms";
        LeaderDemo.Result result = new LeaderDemo(out, TestTiming.seconds(90)).run(
                "--lease.zookeeper.session-timeout=" + session,
                "--lease.leader.elections." + Reminders.JOB + ".ttl=" + session);
        System.out.println(printed.toString(StandardCharsets.UTF_8));

        assertThat(result.problems()).isEmpty();
        assertThat(labels(result)).contains("SKIPPED", "INTERRUPTED", "LOST", "REFUSED", "RELAYED", "RELAY_REFUSED",
                "YIELDS");
        assertThat(result.outbox()).extracting(Reminders.Message::batch).doesNotHaveDuplicates();
        // The paused relay's batch is among them: published by its successor only.
        assertThat(result.outbox()).filteredOn(m -> m.sentBy() != null).isNotEmpty()
                .allSatisfy(m -> assertThat(result.kafka().of(m)).as("records of batch %d", m.batch()).hasSize(1));
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("no batch was written twice",
                "a read_committed consumer saw every batch once");
    }

    private static List<String> labels(LeaderDemo.Result result) {
        return result.timeline().stream().map(Timeline.Entry::what).toList();
    }
}
