package dev.lease.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Samples of one contender in one measurement, in nanoseconds (or any unit the caller keeps to). */
final class Stats {

    private final List<Double> samples = Collections.synchronizedList(new ArrayList<>());

    void add(double sample) {
        samples.add(sample);
    }

    int count() {
        return samples.size();
    }

    double median() {
        return quantile(0.5);
    }

    double p90() {
        return quantile(0.9);
    }

    double quantile(double q) {
        List<Double> sorted;
        synchronized (samples) {
            sorted = new ArrayList<>(samples);
        }
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(sorted);
        return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(q * sorted.size())));
    }
}
