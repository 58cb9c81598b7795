package dev.lease.samples.reports.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;

import dev.lease.samples.reports.CloseEvent;
import dev.lease.samples.reports.PeriodCloseJob;
import dev.lease.samples.reports.ReportEvent;
import dev.lease.samples.reports.ReportEvent.Outcome;
import dev.lease.samples.reports.ReportsApplication;
import dev.lease.samples.reports.SalesReports;

/**
 * Runs three instances of the reports service side by side on one Redis until they have ticked together a few
 * times, then prints, per period, which instance generated the report and which skipped, and how many times each
 * report was computed; and, for {@link PeriodCloseJob} (fixed rate, {@code holdAtLeast}, {@code @Once}), per period
 * how many runs got the lease and how many closes committed. Exits 0 when every report was generated and no period
 * was closed twice. Arguments are passed on to every instance.
 */
public final class ReportsDemo {

    static final List<String> INSTANCES = List.of("reports-1", "reports-2", "reports-3");

    private final PrintStream out;
    private final int periods;
    private final Duration patience;

    ReportsDemo(PrintStream out, int periods, Duration patience) {
        this.out = out;
        this.periods = periods;
        this.patience = patience;
    }

    public static void main(String[] args) throws Exception {
        long factor = Math.max(1, Long.getLong("lease-test.time-factor", 1));
        Result result = new ReportsDemo(System.out, 4, Duration.ofSeconds(60 * factor)).run(args);
        System.exit(result.problems().isEmpty() ? 0 : 1);
    }

    /**
     * What the demo saw.
     *
     * @param ticks per period in which every instance ticked, what each instance did
     * @param computations per such period, how many times its report was computed
     * @param closes per {@code @Once} key of {@link PeriodCloseJob}, the runs that got the lease, in order
     * @param closeRows the rows in {@code period_close}: one per committed close
     */
    record Result(Map<String, Map<String, Outcome>> ticks, Map<String, Long> computations,
            Map<String, List<CloseEvent>> closes, long closeRows, List<String> problems) {
    }

    Result run(String... args) throws Exception {
        Map<String, Map<String, Outcome>> ticks = new TreeMap<>();
        Map<String, List<CloseEvent>> closes = new TreeMap<>();
        // A database of this run's own, shared by its instances: runs in one JVM (tests) do not see each other's.
        String database = "--spring.datasource.name=reports-" + UUID.randomUUID();
        ApplicationListener<ApplicationEvent> listener = event -> {
            if (event instanceof PayloadApplicationEvent<?> p && p.getPayload() instanceof ReportEvent e) {
                synchronized (ticks) {
                    ticks.computeIfAbsent(e.period(), k -> new TreeMap<>()).put(e.instance(), e.outcome());
                    ticks.notifyAll();
                }
                out.printf(Locale.ROOT, "  %s  %-9s  %s%n", e.period(), e.instance(), describe(e.outcome()));
            }
            if (event instanceof PayloadApplicationEvent<?> p && p.getPayload() instanceof CloseEvent e) {
                synchronized (closes) {
                    closes.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
                }
                out.printf(Locale.ROOT, "  %-34s  %-9s  %s%n", e.key(), e.instance(),
                        e.ran() ? "got the lease, closed the period" : "got the lease, key committed before: skipped");
            }
        };
        out.println("Starting " + INSTANCES.size() + " instances of the reports service; each ticks every 2 s...");
        List<ConfigurableApplicationContext> contexts = new ArrayList<>();
        try {
            for (String instance : INSTANCES) {
                String[] all = Stream.concat(Arrays.stream(args), Stream.of(database, "--reports.instance=" + instance))
                        .toArray(String[]::new);
                contexts.add(new SpringApplicationBuilder(ReportsApplication.class).bannerMode(Banner.Mode.OFF)
                        .logStartupInfo(false).listeners(listener).run(all));
            }
            Map<String, Map<String, Outcome>> complete = awaitCompletePeriods(ticks);
            SalesReports reports = contexts.get(0).getBean(SalesReports.class);
            Map<String, Long> computations = new TreeMap<>();
            complete.keySet().forEach(period -> computations.put(period, reports.computations(period)));
            List<String> problems = new ArrayList<>();
            out.println();
            out.println("Periods in which all instances ticked:");
            out.printf(Locale.ROOT, "  %-19s  %s  computed%n", "period",
                    INSTANCES.stream().map(i -> String.format(Locale.ROOT, "%-13s", i)).collect(Collectors.joining()));
            complete.forEach((period, outcomes) -> {
                out.printf(Locale.ROOT, "  %-19s  %s  %d×%n", period, INSTANCES.stream()
                        .map(i -> String.format(Locale.ROOT, "%-13s", outcomes.get(i))).collect(Collectors.joining()),
                        computations.get(period));
                if (reports.find(period).isEmpty()) {
                    problems.add("No report for period " + period);
                }
            });
            out.println();
            long wasted = computations.values().stream().mapToLong(c -> Math.max(0, c - 1)).sum();
            out.println("Each tick, one instance held the lease \"sales-report\" and the others skipped; "
                    + (wasted == 0 ? "no report was computed twice."
                            : wasted + " report(s) were computed again, which the idempotent upsert made harmless."));
            PeriodCloseJob closeJob = contexts.get(0).getBean(PeriodCloseJob.class);
            // The jobs keep running: read the events and the rows at a moment when no close is between its commit
            // and its event, that is when the committed runs and the rows agree, and the events did not move.
            long consistentBy = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            Map<String, List<CloseEvent>> closed;
            long closeRows;
            while (true) {
                Map<String, List<CloseEvent>> before = snapshot(closes);
                closeRows = closeJob.closes();
                closed = snapshot(closes);
                long committed = closed.values().stream().flatMap(List::stream).filter(CloseEvent::ran).count();
                if (before.equals(closed) && committed == closeRows || System.nanoTime() > consistentBy) {
                    break;
                }
                Thread.sleep(20);
            }
            printCloses(closed, closeRows, problems);
            problems.forEach(p -> out.println("PROBLEM: " + p));
            return new Result(complete, computations, closed, closeRows, problems);
        }
        finally {
            for (ConfigurableApplicationContext context : contexts) {
                context.close();
            }
        }
    }

    private static Map<String, List<CloseEvent>> snapshot(Map<String, List<CloseEvent>> closes) {
        synchronized (closes) {
            Map<String, List<CloseEvent>> copy = new TreeMap<>(closes);
            copy.replaceAll((key, events) -> List.copyOf(events));
            return copy;
        }
    }

    /** Prints, per period of {@link PeriodCloseJob}, its runs and closes. */
    private void printCloses(Map<String, List<CloseEvent>> closed, long rows, List<String> problems) {
        out.println();
        out.println("PeriodCloseJob (fixedRate, holdAtLeast, @Once), per period:");
        out.printf(Locale.ROOT, "  %-34s  %-38s  %s%n", "@Once key", "runs (got the lease)", "closes committed");
        closed.forEach((key, events) -> {
            long committed = events.stream().filter(CloseEvent::ran).count();
            out.printf(Locale.ROOT, "  %-34s  %-38s  %d%n", key, events.size() + " " + events.stream()
                    .map(CloseEvent::instance).toList(), committed);
            if (committed != 1) {
                problems.add("Period " + key + " was closed " + committed + " times");
            }
        });
        out.println("Rows in period_close: " + rows + " for " + closed.size() + " periods.");
        if (rows != closed.size()) {
            problems.add(rows + " rows in period_close for " + closed.size() + " periods");
        }
    }

    /** Waits for {@link #periods} periods in which every instance reported what it did. */
    private Map<String, Map<String, Outcome>> awaitCompletePeriods(Map<String, Map<String, Outcome>> ticks)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + patience.toNanos();
        synchronized (ticks) {
            while (true) {
                Map<String, Map<String, Outcome>> complete = new TreeMap<>();
                ticks.forEach((period, outcomes) -> {
                    if (outcomes.keySet().containsAll(INSTANCES)) {
                        complete.put(period, new TreeMap<>(outcomes));
                    }
                });
                if (complete.size() >= periods) {
                    return complete;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("Only " + complete.size() + " of " + periods
                            + " periods were ticked by every instance within " + patience + ": " + ticks);
                }
                ticks.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    private static String describe(Outcome outcome) {
        return switch (outcome) {
            case GENERATED -> "held the lease, generated the report";
            case ALREADY_DONE -> "held the lease, found the report done: nothing to do";
            case SKIPPED -> "skipped: another instance holds the lease";
        };
    }
}
