package dev.lease.samples.leader.demo;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * When {@code reminders.embedded-kafka} is true (the default), points {@code spring.kafka.bootstrap-servers} at one
 * Kafka broker for the whole JVM (spring-kafka-test's embedded KRaft broker), started on first use and stopped when the
 * JVM exits, and creates the relay's topic ({@code reminders.topic}) there with one partition, so that a consumer
 * reads its records in the order they were committed. With the lowest precedence: bootstrap servers given explicitly
 * (a real cluster) win, and then nothing is started.
 */
class EmbeddedKafkaEnvironmentPostProcessor implements EnvironmentPostProcessor {

    private static EmbeddedKafkaKraftBroker shared;

    private static final Set<String> topics = new HashSet<>();

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("reminders.embedded-kafka", Boolean.class, false)
                || environment.containsProperty("spring.kafka.bootstrap-servers")) {
            return;
        }
        String brokers = brokerWithTopic(environment.getRequiredProperty("reminders.topic"));
        environment.getPropertySources().addLast(new MapPropertySource("remindersEmbeddedKafka",
                Map.of("spring.kafka.bootstrap-servers", brokers)));
    }

    private static synchronized String brokerWithTopic(String topic) {
        if (shared == null) {
            EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
            // One broker: the transaction coordinator's log cannot have the default three replicas.
            broker.brokerProperty("transaction.state.log.replication.factor", "1");
            broker.brokerProperty("transaction.state.log.min.isr", "1");
            broker.brokerProperty("transaction.state.log.num.partitions", "1");
            broker.afterPropertiesSet();
            Runtime.getRuntime().addShutdownHook(new Thread(broker::destroy, "embedded-kafka-stop"));
            shared = broker;
        }
        if (topics.add(topic)) {
            shared.addTopics(new NewTopic(topic, 1, (short) 1));
        }
        return shared.getBrokersAsString();
    }
}
