package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.transaction.KafkaTransactionManager;
import org.springframework.transaction.TransactionManager;

import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * The fenced Kafka template over Boot's producer factory, whether Boot's producers are transactional or not; without
 * {@code spring.kafka.producer.transaction-id-prefix} Boot registers no {@code KafkaTransactionManager}, so the
 * database's transaction manager stays the one {@code @Transactional} uses. Nothing here reaches a broker: producers
 * are made at the first send.
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
    void producersWithoutTransactionsStillGetAFencedTemplateAndTheDatabaseKeepsItsTransactionManager() {
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:kafka-fence;DB_CLOSE_DELAY=-1",
                        "lease.kafka.transactional-id-prefix=billing.relay.")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(FencedKafkaTemplate.class)
                            .doesNotHaveBean(KafkaTransactionManager.class);
                    assertThat(context.getBean(FencedKafkaTemplate.class).transactionalId("outbox"))
                            .isEqualTo("billing.relay.outbox");
                    assertThat(context.getBean(TransactionManager.class))
                            .isInstanceOf(DataSourceTransactionManager.class);
                    assertThat(context.getBean(ProducerFactory.class).transactionCapable())
                            .as("the application's own producers stay as they were").isFalse();
                });
    }

    @Test
    void aPrefixThatLeaseNamesCouldEscapeFailsTheStartNamingTheProperty() {
        runner.withPropertyValues("spring.kafka.producer.transaction-id-prefix=tx-",
                "lease.kafka.transactional-id-prefix=billing").run(context -> assertThat(context).hasFailed()
                        .getFailure().rootCause().hasMessageContaining("lease.kafka.transactional-id-prefix 'billing'"));
    }
}
