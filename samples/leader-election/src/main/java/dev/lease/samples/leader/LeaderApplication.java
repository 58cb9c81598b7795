package dev.lease.samples.leader;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

import dev.lease.LeaseLostException;
import dev.lease.samples.leader.ReminderEvent.Kind;

/**
 * The reminder service. Every instance schedules {@link ReminderJob}, which runs only on the leader of the election
 * {@code invoice-reminders} and writes each batch with the term's fencing token; {@link RelayOnLeadership} starts the
 * {@link OutboxRelay} when this instance becomes leader and stops it when it no longer is. Started three times in
 * one JVM by {@code demo.LeaderDemo}.
 */
@SpringBootApplication
@EnableScheduling
public class LeaderApplication {

    private static final Log log = LogFactory.getLog(LeaderApplication.class);

    /**
     * A run whose term ends while it runs is interrupted and ends with {@link LeaseLostException}. That is expected
     * (the next leader carries on, and the library has logged the loss as a warning already), so the scheduler logs
     * one line for it instead of an error with a stack trace, and publishes it for the demo's timeline; anything
     * else is logged as an error, as Spring does by default.
     */
    @Bean
    ThreadPoolTaskSchedulerCustomizer leaseLossIsNoError(ApplicationEventPublisher events,
            @Value("${reminders.instance}") String instance) {
        return scheduler -> scheduler.setErrorHandler(failure -> {
            if (failure instanceof LeaseLostException lost) {
                log.info("A leader-only run ended early: " + lost.getMessage());
                events.publishEvent(new ReminderEvent(instance, Kind.LOST, 0,
                        lost.token().map(t -> t.value()).orElse(0L), "the run ended with LeaseLostException"
                                + (lost.getCause() != null ? " (cause: " + lost.getCause().getClass().getSimpleName()
                                        + ")" : "")));
            }
            else {
                log.error("A scheduled task failed", failure);
            }
        });
    }
}
