package dev.lease.samples.reports.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;

import dev.lease.samples.reports.ReportEvent;
import dev.lease.samples.reports.ReportEvent.Outcome;
import dev.lease.samples.reports.ReportsApplication;
import dev.lease.samples.reports.SalesReports;

/**
 * Runs three instances of the reports service side by side on one Redis until they have ticked together a few
 * times, then prints, per period, which instance generated the report and which skipped, and how many times each
 * report was computed. Exits 0 when every report was generated. Arguments are passed on to every instance.
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
     */
    record Result(Map<String, Map<String, Outcome>> ticks, Map<String, Long> computations, List<String> problems) {
    }

    Result run(String... args) throws Exception {
        Map<String, Map<String, Outcome>> ticks = new TreeMap<>();
        ApplicationListener<ApplicationEvent> listener = event -> {
            if (event instanceof PayloadApplicationEvent<?> p && p.getPayload() instanceof ReportEvent e) {
                synchronized (ticks) {
                    ticks.computeIfAbsent(e.period(), k -> new TreeMap<>()).put(e.instance(), e.outcome());
                    ticks.notifyAll();
                }
                out.printf(Locale.ROOT, "  %s  %-9s  %s%n", e.period(), e.instance(), describe(e.outcome()));
            }
        };
        out.println("Starting " + INSTANCES.size() + " instances of the reports service; each ticks every 2 s...");
        List<ConfigurableApplicationContext> contexts = new ArrayList<>();
        try {
            for (String instance : INSTANCES) {
                String[] all = Stream.concat(Arrays.stream(args), Stream.of("--reports.instance=" + instance))
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
            problems.forEach(p -> out.println("PROBLEM: " + p));
            return new Result(complete, computations, problems);
        }
        finally {
            for (ConfigurableApplicationContext context : contexts) {
                context.close();
            }
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
