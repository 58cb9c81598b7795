package dev.lease.samples.reports;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.samples.reports.ReportEvent.Outcome;

/** Computes the sales report of a period. Idempotent: the report is an upsert keyed by period. */
@Service
public class SalesReportJob {

    private final SalesReports reports;
    private final Duration workTime;
    private final String instance;

    SalesReportJob(SalesReports reports, @Value("${reports.work-time:500ms}") Duration workTime,
            @Value("${reports.instance}") String instance) {
        this.reports = reports;
        this.workTime = workTime;
        this.instance = instance;
    }

    /**
     * Generates the report of {@code period} unless it exists. When another instance holds the lease, the method
     * does not run and the caller gets {@code Optional.empty()}.
     */
    @Leased(name = "sales-report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP, ttl = "30s")
    public Optional<Outcome> generate(String period) throws InterruptedException {
        // The lease saves work, it does not promise a single run: a duplicate must stay harmless.
        if (reports.exists(period)) {
            return Optional.of(Outcome.ALREADY_DONE);
        }
        Thread.sleep(workTime.toMillis()); // stands for the expensive queries
        reports.save(period, Map.of("period", period, "orders", "42", "generated-by", instance));
        return Optional.of(Outcome.GENERATED);
    }
}
