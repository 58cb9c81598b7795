package dev.lease.samples.leader.demo;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

import dev.lease.samples.leader.OutboxPublisher;
import dev.lease.samples.leader.Reminders;

/**
 * What a {@code read_committed} consumer of the relay's topic sees at the end of {@link LeaderDemo}: every outbox
 * message of the run once, and nothing that a paused relay sent in a term that had ended.
 */
final class KafkaCheck {

    /**
     * A record as the consumer sees it.
     *
     * @param messageId the outbox message it carries (the record's key)
     * @param relayedBy the instance whose relay sent it
     * @param token the token of the term it was sent in
     */
    record Seen(long messageId, String relayedBy, long token) {

        @Override
        public String toString() {
            return relayedBy + " (token " + token + ")";
        }
    }

    /**
     * A relay paused with a transaction open, whose term ended meanwhile.
     *
     * @param instance the paused instance
     * @param token its term's token
     */
    record Frozen(String instance, long token) {
    }

    private final List<String> problems;
    private final List<Seen> seen = new ArrayList<>();

    KafkaCheck(List<String> problems) {
        this.problems = problems;
    }

    /**
     * Reads the topic from its beginning up to its last stable offset, as a {@code read_committed} consumer: every
     * transaction committed by now is below it, and no aborted record is ever returned.
     */
    void read(String bootstrapServers, String topic, Duration patience) throws TimeoutException {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + patience.toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("Timed out after " + patience + " reading topic " + topic);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    seen.add(new Seen(number(record.key()), header(record, OutboxPublisher.RELAYED_BY),
                            number(header(record, OutboxPublisher.TERM_TOKEN))));
                }
            }
        }
    }

    /** Every message of the outbox reached the consumer once: none lost, none twice. */
    void everyMessageOnce(List<Reminders.Message> outbox) {
        for (Reminders.Message message : outbox) {
            List<Seen> records = of(message);
            if (records.size() != 1) {
                problems.add("Batch " + message.batch() + " (outbox message " + message.id() + ") reached the "
                        + "read_committed consumer " + records.size() + " times" + (records.isEmpty() ? ""
                                : ", sent by " + records));
            }
        }
    }

    /**
     * Nothing the paused relay sent in its term reached the consumer but the messages it marked sent before the pause:
     * those it committed while it led. Its open transaction's records must never show, nor anything later.
     */
    void nothingFrom(Frozen frozen, List<Reminders.Message> outbox) {
        for (Reminders.Message message : outbox) {
            if (!frozen.instance().equals(message.sentBy()) && of(message).stream().anyMatch(
                    s -> s.relayedBy().equals(frozen.instance()) && s.token() == frozen.token())) {
                problems.add("The paused relay of " + frozen.instance() + " published batch " + message.batch()
                        + " with its old token " + frozen.token() + ": the read_committed consumer sees it");
            }
        }
    }

    /** The records that carry {@code message}, as the outbox table prints them. */
    List<Seen> of(Reminders.Message message) {
        return seen.stream().filter(s -> s.messageId() == message.id()).toList();
    }

    /** A record of another producer of the topic (a real cluster's) counts as no message and no term: -1. */
    private static long number(String text) {
        try {
            return Long.parseLong(text);
        }
        catch (NumberFormatException ex) {
            return -1;
        }
    }

    private static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? "?" : new String(header.value(), StandardCharsets.UTF_8);
    }
}
