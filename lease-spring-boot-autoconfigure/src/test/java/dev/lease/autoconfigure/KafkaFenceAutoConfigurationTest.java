package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * The fenced Kafka template over Boot's producer factory: made when the producers are transactional, left out (the
 * application keeps sending as before) when they are not. Nothing here reaches a broker: producers are made at the
 * first send.
 */
class KafkaFenceAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, KafkaFenceAutoConfiguration.class))
            .withPropertyValues("spring.kafka.bootstrap-servers=127.0.0.1:1");

    @Test
    void transactionalProducersGetAFencedTemplateWithTheConfiguredPrefix() {
        runner.withPropertyValues("spring.kafka.producer.transaction-id-prefix=tx-",
                "lease.kafka.transactional-id-prefix=billing.relay.").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(FencedKafkaTemplate.class);
                    assertThat(context.getBean(FencedKafkaTemplate.class).transactionalId("outbox"))
                            .isEqualTo("billing.relay.outbox");
                });
    }

    @Test
    void theDefaultPrefixIsLease() {
        runner.withPropertyValues("spring.kafka.producer.transaction-id-prefix=tx-").run(context -> assertThat(
                context.getBean(FencedKafkaTemplate.class).transactionalId("outbox")).isEqualTo("lease.outbox"));
    }

    @Test
    void producersWithoutTransactionsGetNoFencedTemplate() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencedKafkaTemplate.class));
    }

    @Test
    void aPrefixThatLeaseNamesCouldEscapeFailsTheStartNamingTheProperty() {
        runner.withPropertyValues("spring.kafka.producer.transaction-id-prefix=tx-",
                "lease.kafka.transactional-id-prefix=billing").run(context -> assertThat(context).hasFailed()
                        .getFailure().rootCause().hasMessageContaining("lease.kafka.transactional-id-prefix 'billing'"));
    }
}
