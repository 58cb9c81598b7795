package dev.lease.samples.reports;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.Once;
import dev.lease.WhenBusy;

/**
 * Closes the sales period on every instance at a fixed rate; the close must take effect once per period. The
 * instances' ticks are not aligned (each started at its own moment), so the lease alone would let every instance
 * through each period: {@code holdAtLeast} keeps it for most of the period, so the other instances' ticks find it
 * busy, and {@code @Once} records {@code period-close-<window>} in the insert's transaction, so a run the lease still
 * lets through (a tick late into the next window, a paused holder, a skewed clock) changes nothing.
 */
@Service
@ConditionalOnProperty(name = "reports.close.enabled", havingValue = "true", matchIfMissing = true)
public class PeriodCloseJob {

    private final JdbcTemplate jdbc;
    private final String instance;

    PeriodCloseJob(JdbcTemplate jdbc, @Value("${reports.instance}") String instance) {
        this.jdbc = jdbc;
        this.instance = instance;
    }

    /** Writes the close of the current period; skipped when the lease is busy or the period's key is committed. */
    @Scheduled(fixedRateString = "${reports.close.rate}")
    @Leased(name = "period-close", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP, ttl = "30s",
            holdAtLeast = "${reports.close.hold}")
    @Once(key = "period-close-#{period}")
    public void closePeriod() {
        // Commits with the key, or not at all. Not idempotent by itself: a second run would add a second row.
        jdbc.update("INSERT INTO period_close (closed_by, closed_at) VALUES (?, CURRENT_TIMESTAMP)", instance);
    }

    /** How many closes were written: one per period in which any instance got through. */
    public long closes() {
        Long count = jdbc.queryForObject("SELECT COUNT(*) FROM period_close", Long.class);
        return count == null ? 0 : count;
    }
}
