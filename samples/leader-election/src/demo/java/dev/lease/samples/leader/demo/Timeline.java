package dev.lease.samples.leader.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;

import dev.lease.FencingToken;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.samples.leader.ReminderEvent;

/**
 * What the instances did and what the demo did to them, in order, printed as it happens and timed on this JVM's
 * monotonic clock. Scenes look in it for what they expect, from a {@link #mark()} on.
 */
final class Timeline {

    /**
     * One line.
     *
     * @param what a label: the kind of a {@link ReminderEvent}, {@code GRANTED}, {@code REVOKED}, or one of the demo's
     * @param token the fencing token involved, 0 when none
     * @param batch the reminder batch involved, 0 when none
     */
    record Entry(Duration at, String instance, String what, long token, long batch, String text) {

        String line() {
            return String.format(Locale.ROOT, "%6.2fs  %-2s %-13s %s", at.toMillis() / 1000.0, instance, what, text);
        }

        boolean is(String instanceName, String label) {
            return instance.equals(instanceName) && what.equals(label);
        }
    }

    private final long start = System.nanoTime();
    private final PrintStream out;
    private final List<Entry> entries = new ArrayList<>();
    private boolean sealed;

    Timeline(PrintStream out) {
        this.out = out;
    }

    /**
     * Records what instance {@code name} publishes: its {@link ReminderEvent}s and its leadership events. Runs on the
     * publishing thread, where {@code faults} may hold it.
     */
    ApplicationListener<ApplicationEvent> listener(String name, ThreadFaults faults) {
        return event -> {
            if (!(event instanceof PayloadApplicationEvent<?> payload)) {
                return;
            }
            Object published = payload.getPayload();
            if (published instanceof ReminderEvent e) {
                if (e.kind() == ReminderEvent.Kind.RELAYING) {
                    // Once per batch and followed by RELAYED: on the timeline only when a fault holds the relay there.
                    Entry entry = new Entry(now(), name, e.kind().name(), e.token(), e.batch(), e.text());
                    faults.strike(name, ThreadFaults.Site.RELAY, () -> record(entry));
                    return;
                }
                record(new Entry(now(), name, e.kind().name(), e.token(), e.batch(), e.text()));
                if (e.kind() == ReminderEvent.Kind.PREPARES) {
                    faults.strike(name, ThreadFaults.Site.JOB, () -> { });
                }
            }
            else if (published instanceof LeadershipGrantedEvent granted) {
                long token = granted.token().map(FencingToken::value).orElse(0L);
                record(new Entry(now(), name, "GRANTED", token, 0, "leads '" + granted.election() + "', term token "
                        + token));
            }
            else if (published instanceof LeadershipRevokedEvent revoked) {
                record(new Entry(now(), name, "REVOKED", 0, 0, "no longer leads: " + revoked.reason()));
            }
        };
    }

    /** Records something the demo did or saw. */
    void note(String instance, String what, String text) {
        record(new Entry(now(), instance, what, 0, 0, text));
    }

    private synchronized void record(Entry entry) {
        if (sealed) {
            return;
        }
        entries.add(entry);
        out.println("  " + entry.line());
    }

    /** Stops recording: what the instances do while shutting down is not part of the story. */
    synchronized void seal() {
        sealed = true;
    }

    /** Where the next entry will go: scenes wait for what happens from here on. */
    synchronized int mark() {
        return entries.size();
    }

    /** The first entry from {@code from} on that matches. */
    synchronized Optional<Entry> find(int from, Predicate<Entry> condition) {
        return entries.subList(from, entries.size()).stream().filter(condition).findFirst();
    }

    synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    private Duration now() {
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
