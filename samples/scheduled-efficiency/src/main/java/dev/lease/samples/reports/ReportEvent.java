package dev.lease.samples.reports;

/**
 * What one instance did at one tick, published as an application event for the demo's table.
 *
 * @param instance the instance ({@code reports.instance})
 * @param period the report period of the tick
 * @param outcome what it did
 */
public record ReportEvent(String instance, String period, Outcome outcome) {

    /** What an instance did at a tick. */
    public enum Outcome {
        /** It held the lease and computed the report. */
        GENERATED,
        /** It held the lease, but the report of this period existed already: nothing to do. */
        ALREADY_DONE,
        /** Another instance held the lease: it skipped the tick. */
        SKIPPED
    }
}
