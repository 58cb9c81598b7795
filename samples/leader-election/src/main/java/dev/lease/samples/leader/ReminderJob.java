package dev.lease.samples.leader;

import java.time.Duration;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.fence.StaleTokenException;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.samples.leader.ReminderEvent.Kind;

/**
 * Sends invoice reminders in numbered batches, on the leader only: every instance schedules it, and on the others it
 * returns at once. Each batch is written with the term's fencing token, so a former leader that runs on after its
 * term ended (paused, or deaf to the interrupt) cannot write a batch its successor already wrote.
 */
@Component
public class ReminderJob {

    private static final Log log = LogFactory.getLog(ReminderJob.class);

    private final Reminders reminders;
    private final ApplicationEventPublisher events;
    private final String instance;
    private final Duration prepareTime;

    ReminderJob(Reminders reminders, ApplicationEventPublisher events, @Value("${reminders.instance}") String instance,
            @Value("${reminders.prepare-time:100ms}") Duration prepareTime) {
        this.reminders = reminders;
        this.events = events;
        this.instance = instance;
        this.prepareTime = prepareTime;
    }

    /**
     * Prepares and writes the next batch of reminders, if this instance leads.
     *
     * @return the batch written, or empty when this instance does not lead (the run was skipped)
     * @throws dev.lease.LeaseLostException when the term ended while the run was under way; caused by a
     *         {@link StaleTokenException} when the table refused the write because a later term had written
     */
    @Scheduled(fixedDelayString = "${reminders.every:1s}")
    @LeaderOnly(election = Reminders.JOB, kind = LeaseKind.CORRECTNESS)
    public Optional<Long> sendReminders() throws InterruptedException {
        FencingToken term = LeaseContext.token();
        long batch = reminders.lastBatch() + 1;
        publish(Kind.PREPARES, batch, term, "prepares batch " + batch + " (term token " + term.value() + ")");
        // Stands for the slow part: finding the overdue invoices and rendering the reminders. A lost term interrupts
        // the thread here.
        Thread.sleep(prepareTime.toMillis());
        // No "do I still lead?" check before writing: a pause could strike right after it. The fence decides.
        try {
            reminders.write(batch, term, instance);
        }
        catch (StaleTokenException ex) {
            publish(Kind.REFUSED, batch, term, "write of batch " + batch + " with token " + term.value()
                    + " REFUSED by the table, which holds token " + ex.current() + " (StaleTokenException)");
            throw ex;
        }
        publish(Kind.WROTE, batch, term, "wrote batch " + batch + " with token " + term.value());
        return Optional.of(batch);
    }

    /**
     * Fence at grant: a term's first act is to move the job row's fence to its token, so a former leader's late
     * write is refused even if it lands before this term's first batch. Runs on the election's thread before any
     * run of the job in the new term.
     */
    @EventListener
    void fenceAtGrant(LeadershipGrantedEvent granted) {
        if (!Reminders.JOB.equals(granted.election()) || granted.token().isEmpty()) {
            return;
        }
        try {
            reminders.fenceAtGrant(granted.token().get());
        }
        catch (StaleTokenException ex) {
            // A later term already fenced the row: this term is over in fact, and its writes will be refused.
            log.warn("Term " + granted.token().get().value() + " of '" + Reminders.JOB + "' is superseded already: "
                    + ex.getMessage());
        }
    }

    private void publish(Kind kind, long batch, FencingToken term, String text) {
        events.publishEvent(new ReminderEvent(instance, kind, batch, term.value(), text));
    }
}
