package dev.lease.samples.reports;

/**
 * A call of {@link PeriodCloseJob#closePeriod()} that got the lease, published as an application event for the
 * demo's table.
 *
 * @param instance the instance ({@code reports.instance})
 * @param key the {@code @Once} key, {@code period-close-} and the period's window
 * @param ran whether the close ran and committed ({@code false}: the period's key was committed before, it was skipped)
 */
public record CloseEvent(String instance, String key, boolean ran) {
}
