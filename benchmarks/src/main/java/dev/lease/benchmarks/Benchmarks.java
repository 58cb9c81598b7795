package dev.lease.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The benchmark harness: starts ZooKeeper, Redis and PostgreSQL once, then measures our library and its peers on
 * them, interleaved round by round so that drifting machine load hits every contender alike, and writes medians
 * and ratios as Markdown. {@code --smoke} runs every contender a handful of times only.
 *
 * <p>Each comparison is a class of its own ({@link UncontendedAndHandover}, {@link LossToInterrupt}, {@link HoldCost},
 * {@link EtcdBenchmarks}, {@link InterceptorOverhead}, {@link OnceCost}, {@link HoldAtLeastRequests} and {@link KafkaCost}); this one reads the arguments, runs the comparisons in their
 * order and holds what they share: the rows, what to close at the end, and the stores {@code --only} asks for.
 */
public final class Benchmarks {

    /** How much to measure. */
    record Settings(boolean smoke, int warmup, int rounds, int batch, Duration handoverSlice, int handoverRounds,
            int lossIterations, Duration lossTtl, Duration lossRenew, int[] holdCounts,
            Duration holdTtl, Duration holdRenew, int holdTicks, int overheadBatch) {

        static Settings fullRun() {
            return new Settings(false, 300, 15, 40, Duration.ofMillis(700), 3, 12, Duration.ofMillis(1500),
                    Duration.ofMillis(500), new int[] {1_000, 10_000}, Duration.ofSeconds(6),
                    Duration.ofSeconds(2), 3, 20_000);
        }

        static Settings smokeRun() {
            return new Settings(true, 5, 3, 3, Duration.ofMillis(400), 1, 1, Duration.ofMillis(1500),
                    Duration.ofMillis(500), new int[] {20}, Duration.ofMillis(1500), Duration.ofMillis(500), 1, 200);
        }
    }

    final Servers servers;
    private String only = "";
    private final List<Row> rows = new ArrayList<>();
    final List<AutoCloseable> closeables = new ArrayList<>();

    private Benchmarks(Servers servers) {
        this.servers = servers;
    }

    public static void main(String[] args) throws Exception {
        boolean smoke = List.of(args).contains("--smoke");
        Path out = Path.of(List.of(args).stream().filter(a -> a.startsWith("--out=")).map(a -> a.substring(6))
                .findFirst().orElse(Files.isDirectory(Path.of("benchmarks")) ? "benchmarks/target/results.md"
                        : "results.md"));
        String loadBefore = load();
        Instant started = Instant.now();
        String only = List.of(args).stream().filter(a -> a.startsWith("--only=")).map(a -> a.substring(7))
                .findFirst().orElse("uncontended,loss,hold,overhead");
        List<Row> rows = run(smoke ? Settings.smokeRun() : Settings.fullRun(), only);
        String markdown = Report.markdown(rows, loadBefore, load(), Duration.between(started, Instant.now()));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, markdown);
        System.out.println(markdown);
        System.out.println("Written to " + out.toAbsolutePath());
        System.exit(0);
    }

    /** Runs every comparison and returns its rows. */
    static List<Row> run(Settings settings) throws Exception {
        return run(settings, "uncontended,loss,hold,overhead");
    }

    /**
     * Runs the named comparisons (uncontended (with handover), loss, hold, overhead, and once and kafka, which are not
     * run by default) and returns their rows.
     */
    static List<Row> run(Settings settings, String only) throws Exception {
        try (Servers servers = Servers.start()) {
            Benchmarks b = new Benchmarks(servers);
            b.only = only;
            try {
                if (only.contains("uncontended")) {
                    new UncontendedAndHandover(b, settings).run();
                }
                if (only.contains("loss")) {
                    new LossToInterrupt(b, settings).run();
                }
                if (only.contains("hold")) {
                    new HoldCost(b, settings).run();
                }
                if (b.stores("etcd") && (only.contains("uncontended") || only.contains("hold"))) {
                    new EtcdBenchmarks(b, settings).run(only.contains("uncontended"), only.contains("hold"));
                }
                if (only.contains("overhead")) {
                    new InterceptorOverhead(b, settings).run();
                }
                if (only.contains("once")) {
                    new OnceCost(b, settings).run();
                    new HoldAtLeastRequests(b, settings).run();
                }
                if (only.contains("kafka")) {
                    new KafkaCost(b, settings).run();
                }
            }
            finally {
                for (int i = b.closeables.size() - 1; i >= 0; i--) {
                    try {
                        b.closeables.get(i).close();
                    }
                    catch (Exception ex) {
                        System.err.println("closing: " + ex);
                    }
                }
            }
            return b.rows;
        }
    }

    /** Whether the run covers {@code store}: "--only=uncontended,jdbc" limits it to some stores; all by default. */
    boolean stores(String store) {
        return !only.matches(".*\\b(zk|redis|jdbc|redlock|etcd)\\b.*") || only.matches(".*\\b" + store + "\\b.*");
    }

    void addRow(Row row) {
        rows.add(row);
    }

    <T extends AutoCloseable> T own(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** A row per contender; each ratio is to the first contender's median, which is ours. */
    void addRows(String section, String metric, List<Contender> contenders, Map<Contender, Stats> stats,
            Map<Contender, String> failures) {
        double reference = stats.get(contenders.get(0)).median();
        for (Contender c : contenders) {
            Stats s = stats.get(c);
            String failure = failures.get(c);
            rows.add(new Row(section, c.name(), metric, s.median(), s.p90(), s.count(), s.median() / reference,
                    failure == null ? null : "FAILED: " + failure));
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    static String describe(Throwable ex) {
        String text = ex.toString();
        return text.length() > 200 ? text.substring(0, 200) + "…" : text;
    }

    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        }
        catch (IOException ex) {
            return "unknown";
        }
    }
}
