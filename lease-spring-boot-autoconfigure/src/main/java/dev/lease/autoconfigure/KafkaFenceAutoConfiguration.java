package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;

import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * A {@link FencedKafkaTemplate} over Boot's {@link ProducerFactory} (built from {@code spring.kafka.*}), when the
 * application has lease-kafka and spring-kafka. The fenced producers are transactional whatever Boot's are: their
 * transactional ids start with {@code lease.kafka.transactional-id-prefix}, and the application's own
 * {@code KafkaTemplate} keeps sending as it did. The application need not set
 * {@code spring.kafka.producer.transaction-id-prefix}, and is better off without it unless it wants Kafka transactions
 * of its own: that property also makes Boot register a {@code KafkaTransactionManager}, before which Boot's
 * DataSource transaction manager backs off, so {@code @Transactional} would run database work in a Kafka transaction.
 */
@AutoConfiguration(afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass({FencedKafkaTemplate.class, ProducerFactory.class})
@ConditionalOnBean(ProducerFactory.class)
@EnableConfigurationProperties(KafkaFenceProperties.class)
public class KafkaFenceAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public KafkaFenceAutoConfiguration() {
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(FencedKafkaTemplate.class)
    FencedKafkaTemplate<?, ?> leaseFencedKafkaTemplate(ProducerFactory<Object, Object> producerFactory,
            KafkaFenceProperties properties) {
        String prefix = properties.getTransactionalIdPrefix();
        return new FencedKafkaTemplate<>(transactional(producerFactory, prefix), prefix);
    }

    /**
     * Boot's factory if its producers are transactional; otherwise a transactional factory of the same settings and
     * serializers, for the template alone (not a bean: a transactional factory bean is what would make others treat
     * the application as one sending in Kafka transactions).
     */
    private static ProducerFactory<Object, Object> transactional(ProducerFactory<Object, Object> boots,
            String prefix) {
        if (boots.transactionCapable()) {
            return boots;
        }
        DefaultKafkaProducerFactory<Object, Object> copy = new DefaultKafkaProducerFactory<>(
                boots.getConfigurationProperties(), boots.getKeySerializerSupplier(),
                boots.getValueSerializerSupplier());
        copy.setTransactionIdPrefix(prefix);
        return copy;
    }
}
