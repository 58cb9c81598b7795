package dev.lease.samples.reports;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A service that every instance runs alike: each generates the sales report on a schedule, and an
 * {@code EFFICIENCY} lease on Redis makes all but one of them skip each tick; and each closes the period at a fixed
 * rate, once per period ({@link PeriodCloseJob}: {@code holdAtLeast} and {@code @Once}). Started three times by
 * {@code demo.ReportsDemo}.
 */
@SpringBootApplication
@EnableScheduling
public class ReportsApplication {
}
