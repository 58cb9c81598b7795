package dev.lease.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The results table of the fault suite, rewritten to {@code target/fault-results.md} after every scenario, so the
 * file holds every scenario that ran in this JVM (surefire runs the suite in one fork).
 */
final class FaultResults {

    /** One scenario's numbers. */
    record Row(String scenario, String backend, String kind, int cycles, int faults, int writesAccepted,
            int writesRejected, int writesUnknown, int staleWritesAccepted, String staleWritesAfterGrant,
            String overlaps, List<Long> lossToInterruptNanos, double seconds, String staleWritesRefusedAfterWrite) {

        Row(String scenario, String backend, String kind, int cycles, int faults, int writesAccepted,
                int writesRejected, int writesUnknown, int staleWritesAccepted, String staleWritesAfterGrant,
                String overlaps, List<Long> lossToInterruptNanos, double seconds) {
            this(scenario, backend, kind, cycles, faults, writesAccepted, writesRejected, writesUnknown,
                    staleWritesAccepted, staleWritesAfterGrant, overlaps, lossToInterruptNanos, seconds, "–");
        }

        String markdown() {
            return "| " + scenario + " | " + backend + " | " + kind + " | " + cycles + " | " + faults + " | "
                    + writesAccepted + " | " + writesRejected + " | " + writesUnknown + " | " + staleWritesAccepted
                    + " | " + staleWritesRefusedAfterWrite + " | " + staleWritesAfterGrant + " | " + overlaps
                    + " | " + percentile(0.50) + " / "
                    + percentile(0.99) + " (n=" + lossToInterruptNanos.size() + ") | "
                    + String.format(java.util.Locale.ROOT, "%.1f", seconds) + " |";
        }

        private String percentile(double p) {
            if (lossToInterruptNanos.isEmpty()) {
                return "–";
            }
            List<Long> sorted = new ArrayList<>(lossToInterruptNanos);
            sorted.sort(null);
            int index = (int) Math.ceil(p * sorted.size()) - 1;
            return Long.toString(sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1_000_000);
        }
    }

    private static final Path FILE = Path.of("target", "fault-results.md");
    private static final Map<String, Row> ROWS = new TreeMap<>();

    private FaultResults() {
    }

    static synchronized void record(Row row) {
        if (Mutant.active() != Mutant.NONE) {
            return; // a mutant run's numbers are not the system's; its verdict goes to FaultDetection
        }
        ROWS.put(row.scenario(), row);
        StringBuilder md = new StringBuilder("# Fault suite results\n\n")
                .append("Produced by the fault suite (`dev.lease.faults`, ").append(Soak.ON ? "soak run, `-Psoak`" : "short run, `./mvnw verify`")
                .append("). Stale writes accepted must be 0 for every CORRECTNESS row; EFFICIENCY rows count overlapping")
                .append(" holders instead (expected, reported, not a failure). Stale writes accepted after a")
                .append(" successor's grant: writes the table accepted with a token below one whose grant had already")
                .append(" been acknowledged when the write was invoked (a fence alone orders writes, not grants, so it")
                .append(" accepts them until the successor's first write); they must be 0 where holders fence at grant")
                .append(" (`-fenced-at-grant` rows) and show the window the fence alone leaves open elsewhere. Stale")
                .append(" writes refused after a successor's write: refused writes invoked after a write with a higher")
                .append(" token had been acknowledged, the order every fence must refuse. Loss →")
                .append(" interrupt: from the moment a fault")
                .append(" took the lease away (for a paused holder: when it resumed) to the first interrupt of a holder,")
                .append(" in ms.\n\n")
                .append("| scenario | backend | kind | cycles | faults | writes accepted | stale writes refused | writes unknown")
                .append(" | stale writes accepted | stale writes refused after a successor's write")
                .append(" | stale writes accepted after a successor's grant | overlaps")
                .append(" | loss → interrupt p50 / p99 ms | seconds |\n")
                .append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
        ROWS.values().forEach(r -> md.append(r.markdown()).append('\n'));
        try {
            Files.createDirectories(FILE.getParent());
            Files.writeString(FILE, md.toString());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
