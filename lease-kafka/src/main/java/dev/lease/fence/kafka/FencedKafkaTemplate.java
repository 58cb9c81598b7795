package dev.lease.fence.kafka;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Function;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.springframework.kafka.core.ProducerFactory;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.fence.StaleTokenException;

/**
 * Sends Kafka records that the broker itself refuses from a holder that lost its lease. Inside a leased section with a
 * fencing token, records go out in a Kafka transaction of a producer whose {@code transactional.id} is the prefix
 * followed by the lease name ({@code lease.} by default: {@link #transactionalId(String)}). At every new grant of the
 * name in this instance that producer is initialised again (the broker bumps its epoch, fences every earlier producer
 * of the id and aborts their open transactions), then the grant is confirmed still held by the lease store
 * ({@link Lease#confirm()}), and only then does the first record go out. A holder that paused past its lease and wakes
 * up is refused by the broker when it sends or commits: it gets {@link StaleTokenException} (resource: the
 * transactional id), and none of its records become visible to {@code read_committed} consumers.
 *
 * <p>What it cannot fence: records sent by other producers of the topic (a plain {@code KafkaTemplate}, another
 * application), and consumers that read uncommitted records ({@code isolation.level=read_uncommitted}, Kafka's
 * default). The connection, serializers and producer settings come from the {@link ProducerFactory}, which must be
 * transactional ({@code setTransactionIdPrefix}; under Boot the auto-configuration takes care of it, and
 * {@code spring.kafka.producer.transaction-id-prefix} is not needed); its own producers are not used.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public class FencedKafkaTemplate<K, V> implements AutoCloseable {

    /** How many times a transaction runs again after the producer was fenced while this holder kept its grant. */
    private static final int FENCED_WHILE_HELD_RETRIES = 3;

    private final TransactionalIds ids;
    private final Function<String, Producer<K, V>> producers;
    private final ConcurrentMap<String, ProducerSlot<K, V>> slots = new ConcurrentHashMap<>();
    private volatile GrantSteps steps = GrantSteps.NONE;

    /**
     * A template whose producers' transactional ids start with {@code lease.}.
     *
     * @param producerFactory the connection, serializers and producer settings; must be transactional
     * @throws IllegalArgumentException when the factory is not transactional
     */
    public FencedKafkaTemplate(ProducerFactory<K, V> producerFactory) {
        this(producerFactory, TransactionalIds.DEFAULT_PREFIX);
    }

    /**
     * A template whose producers' transactional ids start with {@code transactionalIdPrefix}.
     *
     * @param producerFactory the connection, serializers and producer settings; must be transactional
     * @param transactionalIdPrefix letters, digits, {@code .}, {@code _} and {@code -}, ending with {@code .}
     * @throws IllegalArgumentException when the factory is not transactional or the prefix is not valid
     */
    public FencedKafkaTemplate(ProducerFactory<K, V> producerFactory, String transactionalIdPrefix) {
        if (!producerFactory.transactionCapable()) {
            throw new IllegalArgumentException("FencedKafkaTemplate needs a transactional producer factory, and "
                    + producerFactory.getClass().getSimpleName() + " is not: set "
                    + "setTransactionIdPrefix on the factory (under Spring Boot, use the auto-configured "
                    + "FencedKafkaTemplate bean, which needs no spring.kafka.producer.transaction-id-prefix), and "
                    + "grant the application's principal the transactional ids starting with '" + transactionalIdPrefix
                    + "' (a prefixed ACL)");
        }
        this.ids = new TransactionalIds(transactionalIdPrefix);
        this.producers = transactionalId -> newProducer(producerFactory, transactionalId);
    }

    /**
     * Runs {@code callback} in one fenced Kafka transaction under the innermost lease of this thread that has a fencing
     * token, and commits it. When the producer turns out to have been fenced while this holder still holds the grant
     * (a previous holder woke up and initialised the id late, then found its grant gone), the producer is taken over
     * again and the callback runs again; the first run's records were aborted, so nothing is lost or sent twice.
     *
     * @param callback sends the transaction's records
     * @param <T> the result type
     * @return what the callback returned, once the transaction committed
     * @throws StaleTokenException when the broker fenced this holder (a later holder took the name over) or the store
     *         no longer holds its grant: none of the records become visible
     * @throws IllegalStateException outside a leased section, or when no lease of this thread has a fencing token
     */
    public <T> T executeInTransaction(FencedKafkaCallback<K, V, T> callback) {
        Lease lease = leaseWithToken();
        ProducerSlot<K, V> slot = slots.computeIfAbsent(lease.name(),
                name -> new ProducerSlot<>(ids.of(name), producers));
        for (int attempt = 0;; attempt++) {
            lease.checkValid();
            ProducerSlot.Taken<K, V> taken = slot.producerFor(lease, steps);
            try {
                return FencedTransaction.run(slot, taken, callback);
            }
            catch (RuntimeException ex) {
                // A later grant in this instance replaced (and closed) the producer: its initialisation fenced this one.
                if (!KafkaRefusals.fenced(ex) && slot.isCurrent(taken)) {
                    throw ex;
                }
                slot.discard(taken);
                if (attempt >= FENCED_WHILE_HELD_RETRIES || !stillHeld(lease)) {
                    throw KafkaRefusals.refusedByBroker(slot.transactionalId(), taken.token(), ex);
                }
            }
        }
    }

    /**
     * Sends one record in a fenced transaction of its own and waits until it committed.
     *
     * @param record the record
     * @return its metadata
     * @throws StaleTokenException when the broker fenced this holder or the store no longer holds its grant
     * @throws IllegalStateException outside a leased section, or when no lease of this thread has a fencing token
     */
    public RecordMetadata send(ProducerRecord<K, V> record) {
        Future<RecordMetadata> sent = executeInTransaction(sender -> sender.send(record));
        try {
            return sent.get(); // done: the commit flushed it
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted reading the metadata of a committed record", ex);
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("A committed record has no metadata", ex.getCause());
        }
    }

    /**
     * Sends one record with this key and value in a fenced transaction of its own and waits until it committed.
     *
     * @param topic the topic
     * @param key the key, may be null
     * @param value the value
     * @return its metadata
     * @throws StaleTokenException when the broker fenced this holder or the store no longer holds its grant
     * @throws IllegalStateException outside a leased section, or when no lease of this thread has a fencing token
     */
    public RecordMetadata send(String topic, K key, V value) {
        return send(new ProducerRecord<>(topic, key, value));
    }

    /**
     * The {@code transactional.id} of the producer that sends under leases of this name.
     *
     * @param leaseName the lease name
     * @return the prefix, then the name with every character but letters, digits, {@code _} and {@code -}
     *         percent-encoded
     */
    public String transactionalId(String leaseName) {
        return ids.of(leaseName);
    }

    /** Closes every producer this template made. */
    @Override
    public void close() {
        slots.values().forEach(ProducerSlot::close);
        slots.clear();
    }

    /** For tests and the fault suite: what happens between the steps of a takeover. */
    void steps(GrantSteps steps) {
        this.steps = steps;
    }

    private static boolean stillHeld(Lease lease) {
        try {
            lease.confirm();
            return true;
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    private static Lease leaseWithToken() {
        Optional<FencingToken> token = LeaseContext.findToken();
        if (token.isEmpty()) {
            throw new IllegalStateException(inLeasedSection()
                    ? "FencedKafkaTemplate sends only under a lease with a fencing token, and no lease of thread '"
                            + Thread.currentThread().getName() + "' has one (an EFFICIENCY lease, or a backend "
                            + "without tokens such as Redis): make the lease CORRECTNESS on a fenced backend "
                            + "(lease.correctness-backend), or use a plain KafkaTemplate for records that need no fence"
                    : "FencedKafkaTemplate sends only inside a leased section, and thread '"
                            + Thread.currentThread().getName() + "' is in none: call it from a @Leased(kind = "
                            + "CORRECTNESS) or @LeaderOnly method, or inside LeaseTemplate.execute(...)");
        }
        return LeaseContext.find(token.get().lease()).orElseThrow();
    }

    private static boolean inLeasedSection() {
        try {
            LeaseContext.current();
            return true;
        }
        catch (IllegalStateException ex) {
            return false;
        }
    }

    private static <K, V> Producer<K, V> newProducer(ProducerFactory<K, V> factory, String transactionalId) {
        Map<String, Object> config = new HashMap<>(factory.getConfigurationProperties());
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        Object clientId = config.get(ProducerConfig.CLIENT_ID_CONFIG);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, (clientId == null ? "" : clientId + "-") + transactionalId);
        return new KafkaProducer<>(config, factory.getKeySerializerSupplier().get(),
                factory.getValueSerializerSupplier().get());
    }
}
