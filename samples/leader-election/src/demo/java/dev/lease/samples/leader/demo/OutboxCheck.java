package dev.lease.samples.leader.demo;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.lease.samples.leader.Reminders;
import dev.lease.samples.leader.demo.Timeline.Entry;

/** What the outbox and the timeline must show at the end of {@link LeaderDemo}, and the outbox as it prints it. */
final class OutboxCheck {

    private final PrintStream out;
    private final Timeline timeline;
    private final List<String> problems;

    OutboxCheck(PrintStream out, Timeline timeline, List<String> problems) {
        this.out = out;
        this.timeline = timeline;
        this.problems = problems;
    }

    /** Every batch once, in order; none lost, none twice. */
    void everyBatchOnce(List<Reminders.Message> outbox) {
        Map<Long, List<String>> byBatch = outbox.stream().collect(Collectors.groupingBy(Reminders.Message::batch,
                TreeMap::new, Collectors.mapping(Reminders.Message::writtenBy, Collectors.toList())));
        byBatch.forEach((batch, writers) -> {
            if (writers.size() > 1) {
                problems.add("Batch " + batch + " was written " + writers.size() + " times, by " + writers);
            }
        });
        long[] batches = outbox.stream().mapToLong(Reminders.Message::batch).toArray();
        for (int i = 1; i < batches.length; i++) {
            if (batches[i] != batches[i - 1] + 1) {
                problems.add("The outbox's batches do not follow each other: " + Arrays.toString(batches));
                break;
            }
        }
        if (outbox.isEmpty()) {
            problems.add("No batch was written");
        }
    }

    /**
     * The outbox rows written by the terms of this run: the database outlives a run when the demo runs twice in one
     * JVM (tests), and tokens keep rising on the shared ZooKeeper.
     */
    List<Reminders.Message> writtenInThisRun(Reminders reminders) {
        long firstTerm = timeline.entries().stream().filter(e -> e.what().equals("GRANTED"))
                .mapToLong(Entry::token).min().orElse(Long.MAX_VALUE);
        return reminders.outbox().stream().filter(m -> m.token() >= firstTerm).toList();
    }

    /** Each term's token is higher than the one before, whoever was granted it. */
    void tokensRise() {
        long previous = 0;
        for (Entry entry : timeline.entries()) {
            if (entry.what().equals("GRANTED")) {
                if (entry.token() <= previous) {
                    problems.add("Term token " + entry.token() + " of " + entry.instance() + " is not above "
                            + previous);
                }
                previous = entry.token();
            }
        }
    }

    void print(List<Reminders.Message> outbox, KafkaCheck kafka) {
        out.println();
        out.println("The outbox (written by the leader's job with its term's token, sent by the leader's relay), and "
                + "what a read_committed consumer of the topic saw of each message:");
        out.println("  batch  written by  token  sent by  in Kafka, relayed by");
        for (Reminders.Message message : outbox) {
            out.printf(Locale.ROOT, "  %5d  %-10s  %5d  %-7s  %s%n", message.batch(), message.writtenBy(),
                    message.token(), message.sentBy() == null ? "-" : message.sentBy(), kafka.of(message));
        }
    }
}
