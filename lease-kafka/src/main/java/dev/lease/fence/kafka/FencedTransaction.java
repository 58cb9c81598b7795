package dev.lease.fence.kafka;

import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/** One transaction on a taken-over producer: begin, the callback's sends, commit; abort when the callback fails. */
final class FencedTransaction<K, V> implements FencedSender<K, V> {

    private final Producer<K, V> producer;
    private volatile boolean open = true;

    private FencedTransaction(Producer<K, V> producer) {
        this.producer = producer;
    }

    static <K, V, T> T run(ProducerSlot<K, V> slot, ProducerSlot.Taken<K, V> taken,
            FencedKafkaCallback<K, V, T> callback) {
        synchronized (taken) {
            Producer<K, V> producer = taken.producer();
            producer.beginTransaction();
            FencedTransaction<K, V> transaction = new FencedTransaction<>(producer);
            T result;
            try {
                result = callback.doInTransaction(transaction);
                transaction.open = false;
                producer.commitTransaction();
            }
            catch (RuntimeException | Error ex) {
                transaction.open = false;
                if (!KafkaRefusals.fenced(ex)) {
                    abort(slot, taken, ex);
                }
                throw ex;
            }
            return result;
        }
    }

    /** A producer that cannot abort is in a state it will not leave: it is closed, and the next grant-or-call takes over. */
    private static <K, V> void abort(ProducerSlot<K, V> slot, ProducerSlot.Taken<K, V> taken, Throwable failure) {
        try {
            taken.producer().abortTransaction();
        }
        catch (RuntimeException ex) {
            failure.addSuppressed(ex);
            slot.discard(taken);
        }
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<K, V> record) {
        if (!open) {
            throw new IllegalStateException("A FencedSender sends only while its FencedKafkaCallback runs: send from "
                    + "inside the callback passed to FencedKafkaTemplate.executeInTransaction");
        }
        return producer.send(record);
    }
}
