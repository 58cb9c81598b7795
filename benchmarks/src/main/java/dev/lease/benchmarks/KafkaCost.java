package dev.lease.benchmarks;

import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseEngine;
import dev.lease.fence.kafka.FencedKafkaTemplate;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/**
 * The Kafka fence's cost ({@code --only=kafka}), on an embedded KRaft broker: time per transaction of one record
 * through {@link FencedKafkaTemplate} under one grant against a plain transactional {@link KafkaTemplate} on the same
 * broker (the goal: at most 1.2×), and what a handover costs, in Kafka requests (counted by the producers' own
 * {@code request-total} metric, {@link KafkaRequests}) and in time, against a transaction of a grant already taken over.
 */
final class KafkaCost {

    private static final String TOPIC = "kafka-cost";

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    KafkaCost(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    void run() {
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1, TOPIC);
        broker.brokerProperty("transaction.state.log.replication.factor", "1");
        broker.brokerProperty("transaction.state.log.min.isr", "1");
        broker.afterPropertiesSet();
        harness.own((AutoCloseable) broker::destroy);
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString());
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.METRIC_REPORTER_CLASSES_CONFIG, KafkaRequests.class.getName());
        DefaultKafkaProducerFactory<String, String> factory = new DefaultKafkaProducerFactory<>(config);
        factory.setTransactionIdPrefix("bench-tx-");
        harness.own((AutoCloseable) factory::destroy);
        KafkaTemplate<String, String> plain = new KafkaTemplate<>(factory);
        FencedKafkaTemplate<String, String> fenced = harness.own(new FencedKafkaTemplate<>(factory));
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, new InMemoryLeaseBackend());
        routes.put(LeaseKind.EFFICIENCY, routes.get(LeaseKind.CORRECTNESS));
        LeaseEngine engine = harness.own(LeaseEngine.builder(BackendRouter.of(routes)).build());
        LeaseSpec relay = LeaseSpec.of("relay", LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(30));

        Contender plainOne = new Contender("plain transactional KafkaTemplate", null, null,
                () -> plain.executeInTransaction(ops -> ops.send(TOPIC, "k", "v")));
        Contender fencedOne = new Contender("FencedKafkaTemplate (one grant)", null, null,
                () -> fenced.executeInTransaction(sender -> sender.send(TOPIC, "k", "v")));
        Contender handover = new Contender("FencedKafkaTemplate, first transaction of a new grant", null, null,
                () -> fenced.executeInTransaction(sender -> sender.send(TOPIC, "k", "v")));
        List<Contender> contenders = List.of(plainOne, fencedOne, handover);
        Map<Contender, Stats> time = new LinkedHashMap<>();
        Map<Contender, Stats> requests = new LinkedHashMap<>();
        contenders.forEach(c -> {
            time.put(c, new Stats());
            requests.put(c, new Stats());
        });
        int batch = settings.smoke() ? 20 : 200;
        for (int round = 0; round < settings.rounds() + 1; round++) {
            for (Contender c : contenders) {
                boolean warmUp = round == 0;
                if (c == handover) {
                    for (int i = 0; i < Math.max(1, batch / 20); i++) {
                        measureOne(engine, relay, c, warmUp ? null : time.get(c), warmUp ? null : requests.get(c));
                    }
                    continue;
                }
                engine.execute(relay, lease -> {
                    long requests0 = KafkaRequests.total();
                    long begin = System.nanoTime();
                    for (int i = 0; i < batch; i++) {
                        c.leasedOp().run();
                    }
                    if (!warmUp) {
                        time.get(c).add((System.nanoTime() - begin) / 1000.0 / batch);
                        requests.get(c).add((KafkaRequests.total() - requests0) / (double) batch);
                    }
                    return null;
                });
            }
        }
        harness.addRows("Kafka fence", "µs per transaction of one record", contenders, time, Map.of());
        harness.addRows("Kafka fence", "Kafka requests per transaction", contenders, requests, Map.of());
    }

    /** One transaction under a grant of its own (a section on a new name each time: a new transactional id). */
    private static void measureOne(LeaseEngine engine, LeaseSpec relay, Contender c, Stats time, Stats requests) {
        String name = relay.name() + "-" + System.nanoTime();
        engine.execute(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(30)), lease -> {
            long requests0 = KafkaRequests.total();
            long begin = System.nanoTime();
            c.leasedOp().run();
            if (time != null) {
                time.add((System.nanoTime() - begin) / 1000.0);
                requests.add(KafkaRequests.total() - requests0);
            }
            return null;
        });
    }
}
