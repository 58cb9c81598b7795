package dev.lease.samples.reports;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A service that every instance runs alike: each generates the sales report on a schedule, and an
 * {@code EFFICIENCY} lease on Redis makes all but one of them skip each tick. Started three times by
 * {@code demo.ReportsDemo}.
 */
@SpringBootApplication
@EnableScheduling
public class ReportsApplication {
}
