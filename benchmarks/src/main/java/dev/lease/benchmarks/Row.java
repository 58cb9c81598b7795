package dev.lease.benchmarks;

/**
 * One result line.
 *
 * @param section which comparison, e.g. "ZooKeeper, uncontended acquire+release"
 * @param contender who was measured
 * @param metric what the numbers are, with unit
 * @param median median over the samples
 * @param p90 90th percentile over the samples
 * @param samples how many samples
 * @param ratio the contender's median divided by the reference's (ours) median in the same run; NaN if none
 * @param note anything the reader needs (errors, scale-downs)
 */
record Row(String section, String contender, String metric, double median, double p90, int samples, double ratio,
        String note) {

    boolean failed() {
        return note != null && note.startsWith("FAILED");
    }
}
