package dev.lease.fence.kafka;

import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Sends records in the fenced transaction that {@link FencedKafkaTemplate#executeInTransaction} opened: they become
 * visible to {@code read_committed} consumers when the callback returns and the transaction commits, and never if the
 * broker fenced the producer first. Valid only while the callback runs.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public interface FencedSender<K, V> {

    /**
     * Sends a record in the transaction.
     *
     * @param record the record
     * @return its metadata once the broker has it; the transaction decides whether consumers ever see it
     * @throws IllegalStateException when called after the callback returned
     */
    Future<RecordMetadata> send(ProducerRecord<K, V> record);

    /**
     * Sends a record with this key and value to the topic, in the transaction.
     *
     * @param topic the topic
     * @param key the key, may be null
     * @param value the value
     * @return its metadata once the broker has it
     * @throws IllegalStateException when called after the callback returned
     */
    default Future<RecordMetadata> send(String topic, K key, V value) {
        return send(new ProducerRecord<>(topic, key, value));
    }
}
