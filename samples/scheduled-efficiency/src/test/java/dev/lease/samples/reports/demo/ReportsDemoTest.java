package dev.lease.samples.reports.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.lease.samples.reports.CloseEvent;
import dev.lease.samples.reports.ReportEvent.Outcome;

/**
 * Runs the demo's three instances on one embedded redis-server and checks that at every tick they all took part in,
 * exactly one of them ran the job and the report was computed once, and that the fixed-rate close took effect once
 * per period.
 */
class ReportsDemoTest {

    private static final long FACTOR = Math.max(1, Long.getLong("lease-test.time-factor", 1));

    @Test
    void onlyOneInstanceRunsEachTick() throws Exception {
        // Short work, so that even on a slow machine a run ends long before the next tick (2 s later).
        ReportsDemo.Result result = new ReportsDemo(System.out, 3, Duration.ofSeconds(60 * FACTOR))
                .run("--reports.work-time=200ms");

        assertThat(result.problems()).isEmpty();
        assertThat(result.ticks()).hasSizeGreaterThanOrEqualTo(3);
        result.ticks().forEach((period, outcomes) -> {
            assertThat(outcomes).as("period " + period).containsOnlyKeys(ReportsDemo.INSTANCES);
            assertThat(outcomes.values().stream().filter(o -> o == Outcome.GENERATED)).as("period " + period)
                    .hasSize(1);
            assertThat(result.computations()).containsEntry(period, 1L);
        });
        // Somebody skipped: the lease, not luck, kept the others out.
        assertThat(result.ticks().values().stream().map(Map::values).flatMap(c -> c.stream()))
                .contains(Outcome.SKIPPED);
        // PeriodCloseJob, held 1.5 s of its 2 s: closed once in every period any instance got through.
        assertThat(result.closes()).hasSizeGreaterThanOrEqualTo(2);
        result.closes().forEach((key, runs) -> assertThat(runs.stream().filter(CloseEvent::ran)).as(key).hasSize(1));
        assertThat(result.closeRows()).isEqualTo(result.closes().size());
    }
}
