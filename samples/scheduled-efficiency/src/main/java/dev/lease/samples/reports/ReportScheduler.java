package dev.lease.samples.reports;

import java.time.Clock;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import dev.lease.samples.reports.ReportEvent.Outcome;

/** Every instance ticks at the same wall-clock moments; the lease decides which one does the work. */
@Component
class ReportScheduler {

    private final SalesReportJob job;
    private final ApplicationEventPublisher events;
    private final String instance;
    private final long periodSeconds;
    private static final DateTimeFormatter PERIOD = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss");

    private final Clock clock = Clock.systemUTC();

    ReportScheduler(SalesReportJob job, ApplicationEventPublisher events, @Value("${reports.instance}") String instance,
            @Value("${reports.period-seconds:2}") long periodSeconds) {
        this.job = job;
        this.events = events;
        this.instance = instance;
        this.periodSeconds = periodSeconds;
    }

    @Scheduled(cron = "${reports.cron:*/2 * * * * *}")
    void tick() throws InterruptedException {
        String period = currentPeriod();
        Optional<Outcome> outcome = job.generate(period);
        events.publishEvent(new ReportEvent(instance, period, outcome.orElse(Outcome.SKIPPED)));
    }

    /** The period a tick reports on: the start of the current window of {@code reports.period-seconds}. */
    String currentPeriod() {
        LocalDateTime now = LocalDateTime.now(clock).truncatedTo(ChronoUnit.SECONDS);
        return PERIOD.format(now.minusSeconds(now.getSecond() % periodSeconds));
    }
}
