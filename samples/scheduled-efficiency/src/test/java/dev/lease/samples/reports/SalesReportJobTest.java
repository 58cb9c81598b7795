package dev.lease.samples.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.samples.reports.ReportEvent.Outcome;

/** The report job on the embedded redis-server of the default profile, with the schedules turned off. */
@SpringBootTest(properties = {"reports.cron=-", "reports.close.enabled=false", "reports.instance=test",
        "reports.work-time=10ms"})
class SalesReportJobTest {

    @Autowired
    SalesReportJob job;

    @Autowired
    SalesReports reports;

    @Autowired
    LeaseTemplate leases;

    @Test
    void aSecondRunForTheSamePeriodIsHarmless() throws Exception {
        String period = "test-" + UUID.randomUUID();

        assertThat(job.generate(period)).contains(Outcome.GENERATED);
        assertThat(job.generate(period)).contains(Outcome.ALREADY_DONE);

        assertThat(reports.find(period)).containsEntry("generated-by", "test");
        assertThat(reports.computations(period)).isEqualTo(1);
    }

    @Test
    void skipsWhileAnotherInstanceHoldsTheLease() throws Exception {
        String period = "test-" + UUID.randomUUID();
        try (Lease other = leases.acquire(LeaseSpec.of("sales-report", LeaseKind.EFFICIENCY))) {
            // Another thread stands for another instance: a thread re-entering its own lease would not be refused.
            Optional<Outcome> outcome = CompletableFuture.supplyAsync(() -> {
                try {
                    return job.generate(period);
                }
                catch (InterruptedException ex) {
                    throw new IllegalStateException(ex);
                }
            }).get(30, TimeUnit.SECONDS);
            assertThat(outcome).isEmpty();
        }
        assertThat(reports.find(period)).isEmpty();
        assertThat(reports.computations(period)).isZero();
    }
}
