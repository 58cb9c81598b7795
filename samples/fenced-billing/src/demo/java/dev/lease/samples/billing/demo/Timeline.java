package dev.lease.samples.billing.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;

import dev.lease.samples.billing.BillingEvent;
import dev.lease.samples.billing.BillingEvent.Kind;

/**
 * What every instance did, in order, timed from the start of the demo on this JVM's monotonic clock. Lines are
 * printed as they happen. Events of the child JVM are timed when the parent reads them.
 */
final class Timeline {

    /** One line of the timeline; {@code at} is measured from the start of the demo. */
    record Entry(Duration at, BillingEvent event) {

        String line() {
            return String.format(Locale.ROOT, "%6.2fs  %-2s %-9s %s", at.toMillis() / 1000.0, event.instance(),
                    event.kind(), event.text());
        }
    }

    /** A stretch of time during which an instance was cut off (network frozen, process stopped). */
    record Outage(String instance, String label, Duration from, Duration to) {
    }

    private volatile long start = System.nanoTime();
    private final PrintStream out;
    private final List<Entry> entries = new ArrayList<>();
    private final List<Outage> outages = new ArrayList<>();

    Timeline(PrintStream out) {
        this.out = out;
    }

    /** Starts the clock again: times are measured from here on. */
    void restartClock() {
        start = System.nanoTime();
    }

    /** Forwards the {@link BillingEvent}s an application instance publishes to this timeline. */
    ApplicationListener<ApplicationEvent> listener() {
        return event -> {
            if (event instanceof PayloadApplicationEvent<?> payload && payload.getPayload() instanceof BillingEvent e) {
                record(e);
            }
        };
    }

    void record(String instance, Kind kind, long invoiceId, long token, String text) {
        record(new BillingEvent(instance, kind, invoiceId, token, text));
    }

    synchronized void record(BillingEvent event) {
        Entry entry = new Entry(now(), event);
        entries.add(entry);
        out.println("  " + entry.line());
        notifyAll();
    }

    /** Time since the start of the demo; the start of an outage to pass to {@link #outage} later. */
    Duration now() {
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** Records that {@code instance} was cut off from {@code from} until now. */
    synchronized void outage(String instance, String label, Duration from) {
        outages.add(new Outage(instance, label, from, now()));
    }

    /** Waits until an event matching {@code condition} has been recorded. */
    synchronized BillingEvent await(Predicate<BillingEvent> condition, Duration max, String what)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            for (Entry entry : entries) {
                if (condition.test(entry.event())) {
                    return entry.event();
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException("Timed out after " + max + " waiting for " + what);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    synchronized List<Outage> outages() {
        return List.copyOf(outages);
    }
}
