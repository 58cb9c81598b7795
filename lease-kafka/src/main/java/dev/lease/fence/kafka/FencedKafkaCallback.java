package dev.lease.fence.kafka;

/**
 * The work of one fenced transaction: {@link FencedKafkaTemplate#executeInTransaction}. It may run again when the
 * producer was fenced by a late initialisation of a previous holder while this one still holds the lease (its first
 * run's records were aborted, so nothing is sent twice); it must not have effects outside Kafka that cannot repeat.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <T> the result type
 */
@FunctionalInterface
public interface FencedKafkaCallback<K, V, T> {

    /**
     * Sends the records of one transaction.
     *
     * @param sender sends in the transaction; valid only during this call
     * @return the result handed back to the caller once the transaction committed
     */
    T doInTransaction(FencedSender<K, V> sender);
}
