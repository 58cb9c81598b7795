package dev.lease.samples.leader;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Component;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.kafka.FencedKafkaTemplate;
import dev.lease.leader.LeaderOnly;
import dev.lease.samples.leader.ReminderEvent.Kind;

/**
 * Publishes the outbox's unsent messages to Kafka, one batch per call, as docs/kafka.md's outbox recipe does: under
 * the term's lease, in one transaction of the {@link FencedKafkaTemplate}, then marked sent in a database transaction
 * fenced with the same token. {@link OutboxRelay} calls it on its own thread.
 *
 * <p>{@code @LeaderOnly} is what ties the relay to the term: it binds the current term's lease of
 * {@code invoice-reminders} to the relay's thread for the call, so the template sends under that lease's name and
 * token. At every new term in this instance the template initialises the name's producer again, which fences the
 * producer of every earlier term, wherever it runs: a relay that paused mid-batch and wakes up after its term ended
 * has its commit refused by the broker, and nothing it sent becomes visible to {@code read_committed} consumers.
 */
@Component
public class OutboxPublisher {

    /** The record header naming the instance whose relay sent the record. */
    public static final String RELAYED_BY = "relayed-by";

    /** The record header holding the token of the term the record was sent in. */
    public static final String TERM_TOKEN = "term-token";

    private static final int BATCH_SIZE = 10;

    private final Reminders reminders;
    private final FencedKafkaTemplate<String, String> kafka;
    private final ApplicationEventPublisher events;
    private final String instance;
    private final String topic;

    OutboxPublisher(Reminders reminders, FencedKafkaTemplate<String, String> kafka, ApplicationEventPublisher events,
            @Value("${reminders.instance}") String instance, @Value("${reminders.topic}") String topic) {
        this.reminders = reminders;
        this.kafka = kafka;
        this.events = events;
        this.instance = instance;
        this.topic = topic;
    }

    /**
     * Sends the next batch of unsent messages, if this instance leads: the records are keyed by the outbox message's
     * id, so that consumers can drop a message delivered twice (a relay stopped between the commit and the marking).
     *
     * @return how many messages were sent, or empty when this instance does not lead
     * @throws dev.lease.LeaseLostException when the term ended meanwhile; caused by a {@link StaleTokenException}
     *         when the broker refused the transaction (a later term took the producer over) or the job's row refused
     *         the marking
     */
    @LeaderOnly(election = Reminders.JOB, kind = LeaseKind.CORRECTNESS)
    public Optional<Integer> publishNextBatch() {
        FencingToken term = LeaseContext.token();
        List<Reminders.Message> batch = reminders.unsent(BATCH_SIZE);
        if (batch.isEmpty()) {
            return Optional.of(0);
        }
        long last = batch.get(batch.size() - 1).batch();
        try {
            kafka.executeInTransaction(sender -> {
                batch.forEach(message -> sender.send(record(message, term)));
                publish(Kind.RELAYING, last, term, "sent " + batches(batch) + " to Kafka in a transaction (term token "
                        + term.value() + "), not committed yet");
                return null;
            });
        }
        catch (StaleTokenException ex) {
            publish(Kind.RELAY_REFUSED, last, term, "commit of " + batches(batch) + " with token " + term.value()
                    + " REFUSED by the broker: a later term took '" + ex.resource() + "' over (StaleTokenException)");
            throw ex;
        }
        // After the commit: a relay that pauses here leaves the messages to be sent again (at least once).
        try {
            reminders.markSent(batch.stream().map(Reminders.Message::id).toList(), instance, term);
        }
        catch (StaleTokenException ex) {
            publish(Kind.MARK_REFUSED, last, term, "committed " + batches(batch) + " to Kafka with token "
                    + term.value() + ", but marking it sent was REFUSED by the table, which holds token "
                    + ex.current() + " (StaleTokenException)");
            throw ex;
        }
        publish(Kind.RELAYED, last, term, "committed " + batches(batch) + " to Kafka with token " + term.value()
                + ", marked sent");
        return Optional.of(batch.size());
    }

    private ProducerRecord<String, String> record(Reminders.Message message, FencingToken term) {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, Long.toString(message.id()),
                "reminder batch " + message.batch());
        record.headers().add(RELAYED_BY, instance.getBytes(StandardCharsets.UTF_8));
        record.headers().add(TERM_TOKEN, Long.toString(term.value()).getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private static String batches(List<Reminders.Message> batch) {
        return (batch.size() == 1 ? "batch " : "batches ")
                + String.join(", ", batch.stream().map(m -> Long.toString(m.batch())).toList());
    }

    private void publish(Kind kind, long batch, FencingToken term, String text) {
        events.publishEvent(new ReminderEvent(instance, kind, batch, term.value(), text));
    }
}
