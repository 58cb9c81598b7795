package dev.lease.faults.scenarios.kafka;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * The Kafka side of the Kafka scenarios: spring-kafka-test's embedded KRaft broker (one partition per topic, so a
 * consumer sees records in commit order) behind a {@link TcpProxy}: the broker advertises the proxy's port, so every
 * client connection (bootstrap and after) goes through it and {@link TcpProxy#reset()} kills them all.
 */
record KafkaRelay(EmbeddedKafkaKraftBroker broker, TcpProxy link) implements AutoCloseable {

    static KafkaRelay start() throws IOException {
        int linkPort;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            linkPort = free.getLocalPort();
        }
        // The test kit binds the broker to a port of its choosing: the proxy's is chosen first and advertised.
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
        broker.brokerProperty("advertised.listeners", "EXTERNAL://127.0.0.1:" + linkPort);
        broker.brokerProperty("transaction.state.log.replication.factor", "1");
        broker.brokerProperty("transaction.state.log.min.isr", "1");
        broker.brokerProperty("transaction.state.log.num.partitions", "1");
        broker.afterPropertiesSet();
        try {
            String brokers = broker.getBrokersAsString();
            int brokerPort = Integer.parseInt(brokers.substring(brokers.lastIndexOf(':') + 1).trim());
            return new KafkaRelay(broker, TcpProxy.onPort(linkPort, brokerPort));
        }
        catch (IOException | RuntimeException ex) {
            broker.destroy();
            throw ex;
        }
    }

    /** Through the proxy. */
    String bootstrap() {
        return link.address();
    }

    DefaultKafkaProducerFactory<String, String> producerFactory() {
        return producerFactory(bootstrap());
    }

    /** The relay's producer settings, for a holder in a child JVM that reaches the broker at {@code bootstrap}. */
    static DefaultKafkaProducerFactory<String, String> producerFactory(String bootstrap) {
        DefaultKafkaProducerFactory<String, String> factory = new DefaultKafkaProducerFactory<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TestTiming.seconds(20).toMillis()));
        factory.setTransactionIdPrefix("relay-tx-");
        return factory;
    }

    /**
     * The values a {@code read_committed} consumer sees in {@code topic}, read until {@code last} shows up: whatever
     * was committed before it shows up first, the topic having one partition.
     */
    List<String> committedUpTo(String topic, String last, Duration bound) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + bound.toNanos();
            while (!values.contains(last)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("'" + last + "' never became visible to a read_committed consumer; it "
                            + "saw " + values);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    values.add(record.value());
                }
            }
            return values;
        }
    }

    @Override
    public void close() {
        broker.destroy();
        link.close();
    }
}
