package dev.lease.faults.mutants;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.lease.faults.checker.RunFiles;

/**
 * The detection table of the fault suite (scenario × mutant), written to {@code target/fault-detection.md} by the
 * mutant runs of {@link MutantRuns}. Mutant runs go to several test JVMs at once (and, under {@code -Psoak}, to
 * executions of their own), so every cell is a file of its own ({@link RunFiles}) and the table is rebuilt from all
 * of them after every scenario.
 */
final class FaultDetection {

    enum Result { DETECTED, NOT_DETECTED, ERROR }

    /** What one scenario did against one mutant; {@code firstProblem} is empty when it passed. */
    record Cell(String scenario, String kind, Mutant mutant, Result result, String firstProblem, double seconds) {

        String tsv() {
            return String.join("\t", scenario, kind, mutant.id, result.name(), firstProblem,
                    String.format(Locale.ROOT, "%.1f", seconds));
        }

        static Cell parse(String line) {
            String[] f = line.split("\t", -1);
            return new Cell(f[0], f[1], Mutant.of(f[2]), Result.valueOf(f[3]), f[4], Double.parseDouble(f[5]));
        }

        String markdown() {
            return switch (result) {
                case DETECTED -> "**detected**: " + firstProblem;
                case NOT_DETECTED -> "not detected";
                case ERROR -> "error (no detection): " + firstProblem;
            };
        }
    }

    private static final Path DIR = RunFiles.rows("fault-detection");
    private static final Path FILE = Path.of("target", "fault-detection.md");
    private static final int PROBLEM_LENGTH = 220;

    private FaultDetection() {
    }

    /**
     * The first problem a failed scenario reported, on one line: the history check's first problem, else the
     * assertion's message.
     */
    static String firstProblem(Throwable failure) {
        String message = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
        List<String> lines = message.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        String first = lines.size() > 1 && lines.get(0).contains(" problem(s), history in ") ? lines.get(1)
                : String.join(" ", lines);
        if (!(failure instanceof AssertionError)) {
            first = failure.getClass().getSimpleName() + ": " + first;
        }
        first = first.replaceAll("\\s+", " ").replace("|", "\\|");
        return first.length() > PROBLEM_LENGTH ? first.substring(0, PROBLEM_LENGTH) + "…" : first;
    }

    static synchronized void record(Cell cell) {
        RunFiles.exclusively(DIR, () -> {
            RunFiles.write(DIR.resolve(cell.mutant().id).resolve(RunFiles.fileName(cell.scenario()) + ".tsv"),
                    cell.tsv());
            RunFiles.write(FILE, table());
        });
    }

    private static String table() {
        Map<String, Map<Mutant, Cell>> rows = new TreeMap<>();
        Map<String, String> kinds = new TreeMap<>();
        Map<Mutant, Double> seconds = new TreeMap<>();
        for (Path file : RunFiles.list(DIR, ".tsv")) {
            for (String line : read(file)) {
                if (line.isBlank()) {
                    continue;
                }
                Cell cell = Cell.parse(line);
                rows.computeIfAbsent(cell.scenario(), s -> new TreeMap<>()).put(cell.mutant(), cell);
                kinds.put(cell.scenario(), cell.kind());
                seconds.merge(cell.mutant(), cell.seconds(), Double::sum);
            }
        }
        List<Mutant> mutants = new ArrayList<>(List.of(Mutant.values()));
        mutants.remove(Mutant.NONE);
        StringBuilder md = new StringBuilder("# Fault suite detection power\n\n")
                .append("Every fault scenario run once more against each mutant (`dev.lease.faults.mutants.Mutant`, seed ")
                .append(Mutant.SEED).append("): a scenario that fails against a mutant (the history check or its own")
                .append(" assertions) detected it; the first problem it reported is shown. Every CORRECTNESS scenario")
                .append(" must detect the fence without the comparison; the other cells are reported, not enforced.")
                .append(" A blank cell: that scenario was not run against that mutant.\n\n| scenario | kind |");
        mutants.forEach(m -> md.append(' ').append(m.title).append(" |"));
        md.append("\n|---|---|");
        mutants.forEach(m -> md.append("---|"));
        md.append('\n');
        rows.forEach((scenario, cells) -> {
            md.append("| ").append(scenario).append(" | ").append(kinds.get(scenario)).append(" |");
            mutants.forEach(m -> md.append(' ').append(cells.containsKey(m) ? cells.get(m).markdown() : "")
                    .append(" |"));
            md.append('\n');
        });
        md.append("| time of the mutant runs (s) | |");
        mutants.forEach(m -> md.append(' ').append(seconds.containsKey(m)
                ? String.format(Locale.ROOT, "%.0f", seconds.get(m)) : "").append(" |"));
        return md.append('\n').toString();
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
