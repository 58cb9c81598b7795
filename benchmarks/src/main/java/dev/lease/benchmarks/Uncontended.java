package dev.lease.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The uncontended rows: each contender's acquire+release of a lock nobody else wants, batch after batch, the order of
 * the contenders rotated every round.
 */
final class Uncontended {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    Uncontended(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    /**
     * Times each contender's acquire+release; with {@code trips}, also counts the store round trips of the timed
     * operations (the count is read between batches, so it does not add to their time).
     */
    void run(String section, List<Contender> contenders, java.util.function.LongSupplier trips,
            String tripsMetric) {
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        Map<Contender, long[]> counted = new LinkedHashMap<>();
        contenders.forEach(c -> counted.put(c, new long[2]));
        Map<Contender, String> failures = new LinkedHashMap<>();
        List<Contender> alive = new ArrayList<>(contenders);
        for (Contender c : contenders) {
            stats.put(c, new Stats());
            try {
                for (int i = 0; i < settings.warmup(); i++) {
                    op(c);
                }
            }
            catch (Throwable ex) {
                failures.put(c, Benchmarks.describe(ex));
                alive.remove(c);
            }
        }
        for (int round = 0; round < settings.rounds(); round++) {
            for (int k = 0; k < alive.size(); k++) {
                // Rotate the order each round so that no contender always runs right after the same neighbour.
                Contender c = alive.get((k + round) % alive.size());
                if (failures.containsKey(c)) {
                    continue;
                }
                try {
                    long tripsBefore = trips == null ? 0 : trips.getAsLong();
                    long begin = System.nanoTime();
                    for (int i = 0; i < settings.batch(); i++) {
                        op(c);
                    }
                    stats.get(c).add((System.nanoTime() - begin) / 1000.0 / settings.batch());
                    if (trips != null) {
                        counted.get(c)[0] += trips.getAsLong() - tripsBefore;
                        counted.get(c)[1] += settings.batch();
                    }
                }
                catch (Throwable ex) {
                    failures.put(c, Benchmarks.describe(ex));
                }
            }
        }
        harness.addRows(section, "µs per acquire+release", contenders, stats, failures);
        if (trips != null) {
            for (Contender c : contenders) {
                long[] n = counted.get(c);
                harness.addRow(new Row(section, c.name(), tripsMetric, n[0] / (double) Math.max(1, n[1]), Double.NaN,
                        stats.get(c).count(), Double.NaN, null));
            }
        }
    }

    private static void op(Contender c) throws Exception {
        if (c.leasedOp() != null) {
            c.leasedOp().run();
        }
        else {
            c.first().acquire("u-" + c.name().replaceAll("[^A-Za-z]", "")).close();
        }
    }
}
