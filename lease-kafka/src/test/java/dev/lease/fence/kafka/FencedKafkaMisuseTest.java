package dev.lease.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Misuse fails before any producer is made, with a message naming the fix. No broker: the bootstrap address points
 * nowhere, and nothing here may try to reach it.
 */
class FencedKafkaMisuseTest {

    private final DefaultKafkaProducerFactory<String, String> factory = factory("lease-tx-");
    private final FencedKafkaTemplate<String, String> template = new FencedKafkaTemplate<>(factory);
    private LeaseEngine engine;

    @AfterEach
    void close() {
        template.close();
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void aSendOutsideALeasedSectionIsRefused() {
        assertThatThrownBy(() -> template.send("topic", "k", "v")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only inside a leased section")
                .hasMessageContaining("@Leased(kind = CORRECTNESS)").hasMessageContaining("LeaseTemplate.execute");
    }

    @Test
    void aSendUnderALeaseWithoutTokenIsRefused() {
        engine = KafkaFixture.engineOver(new Unfenced());
        assertThatThrownBy(() -> engine.execute(LeaseSpec.of("relay", LeaseKind.EFFICIENCY),
                lease -> template.send("topic", "k", "v"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no lease of thread").hasMessageContaining("has one")
                .hasMessageContaining("make the lease CORRECTNESS on a fenced backend");
    }

    @Test
    void aProducerFactoryWithoutTransactionsIsRefused() {
        assertThatThrownBy(() -> new FencedKafkaTemplate<>(factory(null)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a transactional producer")
                .hasMessageContaining("setTransactionIdPrefix").hasMessageContaining("auto-configured FencedKafkaTemplate");
    }

    @Test
    void aPrefixThatLeaseNamesCouldEscapeIsRefused() {
        assertThatThrownBy(() -> new FencedKafkaTemplate<>(factory, "lease")).isInstanceOf(
                IllegalArgumentException.class).hasMessageContaining("lease.kafka.transactional-id-prefix 'lease'")
                .hasMessageContaining("ending with '.'");
        assertThatThrownBy(() -> new FencedKafkaTemplate<>(factory, "a b.")).isInstanceOf(
                IllegalArgumentException.class);
    }

    /** Names under one prefix never make an id under another: an encoded name has no dot. */
    @Test
    void namesCannotLeaveTheirPrefix() {
        FencedKafkaTemplate<String, String> app = new FencedKafkaTemplate<>(factory, "app.");
        FencedKafkaTemplate<String, String> appX = new FencedKafkaTemplate<>(factory, "app.x.");
        assertThat(app.transactionalId("x.y")).isEqualTo("app.x%2Ey").isNotEqualTo(appX.transactionalId("y"));
        assertThat(app.transactionalId("r%2E")).isEqualTo("app.r%252E");
        assertThat(app.transactionalId("relé-1_a:b")).isEqualTo("app.rel%C3%A9-1_a%3Ab");
        assertThat(template.transactionalId("invoice-42")).isEqualTo("lease.invoice-42");
    }

    private static DefaultKafkaProducerFactory<String, String> factory(String transactionIdPrefix) {
        DefaultKafkaProducerFactory<String, String> factory = new DefaultKafkaProducerFactory<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
        if (transactionIdPrefix != null) {
            factory.setTransactionIdPrefix(transactionIdPrefix);
        }
        return factory;
    }

    /** A store that issues no tokens, as Redis does. */
    private static final class Unfenced implements LeaseBackend<Grant> {

        private final LeaseBackend<?> memory = new InMemoryLeaseBackend();

        @Override
        public String id() {
            return "unfenced";
        }

        @Override
        public BackendTraits traits() {
            return BackendTraits.unfenced("a test store that issues no tokens");
        }

        @Override
        public Optional<Grant> tryAcquire(GrantRequest request) throws Exception {
            return memory.tryAcquire(request).map(grant -> new Grant() {
                @Override
                public String name() {
                    return grant.name();
                }

                @Override
                public OptionalLong token() {
                    return OptionalLong.empty();
                }
            });
        }

        @Override
        public boolean renew(Grant grant) {
            return true;
        }

        @Override
        public void release(Grant grant) {
        }
    }
}
