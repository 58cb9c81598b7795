package dev.lease.faults.checker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.lease.faults.harness.Soak;
import dev.lease.faults.mutants.Mutant;

/**
 * The results table of the fault suite, rewritten to {@code target/fault-results.md} after every scenario from the rows
 * of every scenario of this build, whichever fork ran it ({@link RunFiles}).
 */
public final class FaultResults {

    /** One scenario's numbers. */
    public record Row(String scenario, String backend, String kind, int cycles, int faults, int writesAccepted,
            int writesRejected, int writesUnknown, int staleWritesAccepted, String staleWritesAfterGrant,
            String overlaps, History.LossToInterrupt lossToInterrupt, double seconds,
            String staleWritesRefusedAfterWrite) {

        String markdown() {
            return "| " + scenario + " | " + backend + " | " + kind + " | " + cycles + " | " + faults + " | "
                    + writesAccepted + " | " + writesRejected + " | " + writesUnknown + " | " + staleWritesAccepted
                    + " | " + staleWritesRefusedAfterWrite + " | " + staleWritesAfterGrant + " | " + overlaps
                    + " | " + percentile(0.50) + " / "
                    + percentile(0.99) + " (n=" + lossToInterrupt.afterNanos().size() + "); "
                    + lossToInterrupt.beforeNanos().size() + " before; " + lossToInterrupt.toldAtTheEnd()
                    + " at the end; " + lossToInterrupt.neverTold() + " never | "
                    + String.format(java.util.Locale.ROOT, "%.1f", seconds) + " |";
        }

        private String percentile(double p) {
            if (lossToInterrupt.afterNanos().isEmpty()) {
                return "–";
            }
            List<Long> sorted = new ArrayList<>(lossToInterrupt.afterNanos());
            sorted.sort(null);
            int index = (int) Math.ceil(p * sorted.size()) - 1;
            return Long.toString(sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1_000_000);
        }
    }

    private static final Path FILE = Path.of("target", "fault-results.md");
    private static final Path ROWS = RunFiles.rows("fault-results");

    private FaultResults() {
    }

    public static synchronized void record(Row row) {
        if (Mutant.active() != Mutant.NONE) {
            return; // a mutant run's numbers are not the system's; its verdict goes to FaultDetection
        }
        RunFiles.exclusively(ROWS, () -> {
            RunFiles.write(ROWS.resolve(RunFiles.fileName(row.scenario()) + ".md"), row.markdown() + "\n");
            RunFiles.write(FILE, table());
        });
    }

    private static String table() {
        StringBuilder md = new StringBuilder("# Fault suite results\n\n")
                .append("Produced by the fault suite (`dev.lease.faults`, ").append(Soak.ON ? "soak run, `-Psoak`" : "short run, `./mvnw verify`")
                .append("). Stale writes accepted must be 0 for every CORRECTNESS row; EFFICIENCY rows count overlapping")
                .append(" holders instead (expected, reported, not a failure). Stale writes accepted after a")
                .append(" successor's grant: writes the table accepted with a token below one whose grant had already")
                .append(" been acknowledged when the write was invoked (a fence alone orders writes, not grants, so it")
                .append(" accepts them until the successor's first write); they must be 0 where holders fence at grant")
                .append(" (`-fenced-at-grant` rows) and show the window the fence alone leaves open elsewhere. Stale")
                .append(" writes refused after a successor's write: refused writes invoked after a write with a higher")
                .append(" token had been acknowledged, the order every fence must refuse.\n\n")
                .append("The scheduled `@Once` row (`scheduled-once`) counts a job's runs per period instead: cycles are")
                .append(" the periods that took effect, writes accepted the effects, stale writes refused the runs skipped")
                .append(" because their period's key had committed, writes unknown the runs that entered the body and")
                .append(" did not commit (killed, frozen past their bound, timed out waiting), stale writes accepted the")
                .append(" effects beyond one per period, which must be 0.\n\n")
                .append("The Kafka rows (`kafka-*`) count records: writes accepted the records a read_committed")
                .append(" consumer sees, stale writes refused (both columns) the stale sections whose transaction the")
                .append(" broker or the confirmation refused, writes unknown the successor's sends that failed, stale")
                .append(" writes accepted (and after a successor's grant) the stale section's records visible, which")
                .append(" must be 0; overlaps shows the records visible per grant (token = count).\n\n")
                .append("Loss → interrupt: one sample per section (one grant to one holder) that the store lost while")
                .append(" the section held it, from the store-side loss to that holder's own first interrupt in that")
                .append(" section; an interrupt counts only for the section it interrupted. The store-side loss is when")
                .append(" the successor's grant (the next token handed out, to another holder; without tokens the next")
                .append(" grant) was acknowledged to it, or when the harness saw the store drop the grant (e.g. a")
                .append(" session expiry) where it records that; the store made the grant before that acknowledgement,")
                .append(" by at most one response. A loss counts while the section held the grant: before its normal")
                .append(" release was invoked, or at any time if it ended lost. The interrupt is when the holder's")
                .append(" thread saw it (an InterruptedException, or the interrupt flag found set right after a write).")
                .append(" p50 / p99 (n) are over the holders interrupted after the loss, in ms; \"before\" counts")
                .append(" holders interrupted before the store lost their grant (the design's intent: local validity")
                .append(" ends before anyone else can be granted); \"at the end\" counts holders not interrupted but")
                .append(" told by LeaseLostException when their work returned; \"never\" counts holders never told,")
                .append(" which fails a CORRECTNESS run.\n\n")
                .append("| scenario | backend | kind | cycles | faults | writes accepted | stale writes refused | writes unknown")
                .append(" | stale writes accepted | stale writes refused after a successor's write")
                .append(" | stale writes accepted after a successor's grant | overlaps")
                .append(" | loss → interrupt p50 / p99 ms (n); before; at the end; never | seconds |\n")
                .append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
        for (Path file : RunFiles.list(ROWS, ".md")) {
            try {
                md.append(Files.readString(file));
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return md.toString();
    }
}
