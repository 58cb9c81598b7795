package dev.lease.fence.kafka;

import java.time.Duration;
import java.util.function.Function;

import org.apache.kafka.clients.producer.Producer;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseLostException;

/**
 * The producer of one lease name in this instance, and the grant it was taken over for. A new grant takes it over in
 * three steps, in this order: a new producer is initialised (the broker bumps the epoch of the transactional id, which
 * fences every earlier producer of it and aborts their open transactions), then the store confirms that the grant is
 * still held, and only then may a record go out. A successor granted before the confirmation makes it fail; one
 * granted after it initialises after this producer did, and fences it.
 *
 * <p>The takeover holds the slot's monitor; a transaction holds only its producer's ({@link Taken}). A new grant in
 * this instance therefore never waits for a transaction of the previous one: its new producer's initialisation fences
 * that transaction, which a section that lost its lease (and was interrupted) may still be trying to commit.
 */
final class ProducerSlot<K, V> {

    private final String transactionalId;
    private final Function<String, Producer<K, V>> producers;
    private Taken<K, V> current;

    /** A producer taken over for one grant; transactions on it hold its monitor, one at a time. */
    record Taken<K, V>(Producer<K, V> producer, FencingToken token) {
    }

    ProducerSlot(String transactionalId, Function<String, Producer<K, V>> producers) {
        this.transactionalId = transactionalId;
        this.producers = producers;
    }

    String transactionalId() {
        return transactionalId;
    }

    /**
     * The producer to send with under {@code lease}: the current one when it was taken over for this grant, else a
     * new one, initialised and confirmed.
     *
     * @throws dev.lease.fence.StaleTokenException when the store no longer holds the grant after the initialisation
     */
    synchronized Taken<K, V> producerFor(Lease lease, GrantSteps steps) {
        FencingToken token = lease.token();
        if (current != null && token.equals(current.token())) {
            return current;
        }
        steps.beforeInitialisation(transactionalId);
        Producer<K, V> producer;
        if (current == null || steps.initialiseAtGrant()) {
            discard(current);
            producer = producers.apply(transactionalId);
            try {
                producer.initTransactions();
            }
            catch (RuntimeException ex) {
                closeQuietly(producer);
                throw ex;
            }
        }
        else {
            producer = current.producer();
        }
        current = null;
        steps.beforeConfirmation(transactionalId);
        try {
            lease.confirm();
        }
        catch (LeaseLostException ex) {
            // The epoch this producer holds may have been taken after a successor's: it must never send.
            closeQuietly(producer);
            throw KafkaRefusals.notConfirmed(transactionalId, token, ex);
        }
        current = new Taken<>(producer, token);
        return current;
    }

    /** Whether {@code taken} is still the producer of the name: no later grant or failure replaced it. */
    synchronized boolean isCurrent(Taken<K, V> taken) {
        return taken == current;
    }

    /** Closes a producer (fenced, failed, or replaced): the next transaction takes the name over again. */
    synchronized void discard(Taken<K, V> taken) {
        if (taken == null) {
            return;
        }
        if (taken == current) {
            current = null;
        }
        closeQuietly(taken.producer());
    }

    /** Closes the current producer, if any. */
    synchronized void close() {
        discard(current);
    }

    /**
     * Closes without waiting, on a thread that a lost lease may have interrupted (the client would throw instead of
     * closing); the interrupt is kept for the holder. What the close throws must not hide why it was closed.
     */
    static void closeQuietly(Producer<?, ?> producer) {
        boolean interrupted = Thread.interrupted();
        try {
            producer.close(Duration.ZERO);
        }
        catch (RuntimeException ignored) {
            // Closing a fenced or failed producer can fail in turn; it is dropped either way.
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
