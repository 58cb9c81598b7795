package dev.lease.fence.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TestTiming;

/**
 * A real Kafka broker in the test JVM (spring-kafka-test's embedded KRaft broker, one per test class), two instances'
 * lease engines over one in-memory lease store, and a {@code read_committed} consumer.
 */
final class KafkaFixture {

    private KafkaFixture() {
    }

    static EmbeddedKafkaKraftBroker startBroker() {
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
        broker.brokerProperty("transaction.state.log.replication.factor", "1");
        broker.brokerProperty("transaction.state.log.min.isr", "1");
        broker.brokerProperty("transaction.state.log.num.partitions", "1");
        broker.afterPropertiesSet();
        return broker;
    }

    /** A new topic of one partition, so that a consumer sees records in the order they were committed. */
    static String newTopic(EmbeddedKafkaKraftBroker broker) {
        String topic = "t-" + UUID.randomUUID();
        broker.addTopics(topic);
        return topic;
    }

    static DefaultKafkaProducerFactory<String, String> producerFactory(EmbeddedKafkaKraftBroker broker) {
        DefaultKafkaProducerFactory<String, String> factory = new DefaultKafkaProducerFactory<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TestTiming.seconds(20).toMillis()));
        factory.setTransactionIdPrefix("app-tx-");
        return factory;
    }

    /**
     * The values a {@code read_committed} consumer sees in the topic, read until {@code last} shows up: a record
     * committed before it would have shown up first, since the topic has one partition.
     */
    static List<String> committedUpTo(EmbeddedKafkaKraftBroker broker, String topic, String last) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + TestTiming.seconds(20).toNanos();
            while (!values.contains(last)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("'" + last + "' never became visible to a read_committed consumer; "
                            + "it saw " + values);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    values.add(record.value());
                }
            }
            return values;
        }
    }

    static LeaseEngine engineOver(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return LeaseEngine.builder(BackendRouter.of(routes)).build();
    }

    /**
     * The store as a paused holder sees it: it is never told that its grant was taken away (a paused process hears
     * nothing), and finds out only when it asks the store again.
     */
    static <G extends Grant> LeaseBackend<G> unaware(LeaseBackend<G> store) {
        return new Unaware<>(store);
    }

    private static final class Unaware<G extends Grant> extends ForwardingLeaseBackend<G> {

        Unaware(LeaseBackend<G> store) {
            super(store);
        }

        @Override
        public Optional<G> tryAcquire(GrantRequest request) throws Exception {
            return super.tryAcquire(new GrantRequest(request.name(), request.ttl(), reason -> {
            }, request.attempt(), request.deadline()));
        }
    }
}
