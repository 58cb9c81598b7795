package dev.lease.samples.reports.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.samples.reports.CloseEvent;

/**
 * {@code @Once} on the fixed-rate close, with three instances whose ticks are not aligned and nothing held after the
 * work ({@code holdAtLeast} 0): the lease lets every instance through in most periods, and the close still takes
 * effect once per period.
 */
class PeriodCloseJobTest {

    private static final long FACTOR = Math.max(1, Long.getLong("lease-test.time-factor", 1));

    @Test
    void threeInstancesCloseEachPeriodOnceWhateverTheLeaseLetsThrough() throws Exception {
        ReportsDemo.Result result = new ReportsDemo(System.out, 3, Duration.ofSeconds(60 * FACTOR))
                .run("--reports.work-time=50ms", "--reports.close.rate=1s", "--reports.close.hold=0");

        assertThat(result.problems()).isEmpty();
        assertThat(result.closes()).hasSizeGreaterThanOrEqualTo(3);
        result.closes().forEach((key, runs) -> assertThat(runs.stream().filter(CloseEvent::ran)).as(key).hasSize(1));
        assertThat(result.closeRows()).isEqualTo(result.closes().size());
        // Duplicates were attempted: runs the lease let through and @Once skipped, not luck.
        assertThat(result.closes().values().stream().mapToInt(List::size).sum())
                .isGreaterThan(result.closes().size());
    }
}
