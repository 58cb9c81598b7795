package dev.lease.samples.leader;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.samples.leader.ReminderEvent.Kind;

/**
 * Runs the {@link OutboxRelay} on the leader only: started when this instance becomes leader of
 * {@code invoice-reminders}, stopped when it no longer is. The same two listeners start and stop a JMS or Kafka
 * listener container declared with {@code autoStartup = false}.
 *
 * <p>The revoked event comes once this process has learnt that its term ended, which can be after the next leader's
 * term began (a frozen network, a pause): for a moment both relays may run. Starting and stopping is therefore not
 * what keeps a former leader's relay from publishing: each of its batches runs under the term's lease
 * ({@link OutboxPublisher}), and the broker refuses a batch of a term that ended. Records a relay committed but had
 * not marked sent when it stopped are sent again by the next one: consumers deduplicate by key.
 */
@Component
public class RelayOnLeadership {

    private final OutboxRelay relay;
    private final ApplicationEventPublisher events;
    private final String instance;

    RelayOnLeadership(OutboxRelay relay, ApplicationEventPublisher events,
            @Value("${reminders.instance}") String instance) {
        this.relay = relay;
        this.events = events;
        this.instance = instance;
    }

    @EventListener
    void granted(LeadershipGrantedEvent event) {
        if (Reminders.JOB.equals(event.election())) {
            relay.start();
            events.publishEvent(new ReminderEvent(instance, Kind.RELAY_STARTED, 0,
                    event.token().map(t -> t.value()).orElse(0L), "outbox relay started"));
        }
    }

    @EventListener
    void revoked(LeadershipRevokedEvent event) {
        if (Reminders.JOB.equals(event.election())) {
            relay.stop();
            events.publishEvent(new ReminderEvent(instance, Kind.RELAY_STOPPED, 0, 0, "outbox relay stopped ("
                    + event.reason() + ")"));
        }
    }
}
