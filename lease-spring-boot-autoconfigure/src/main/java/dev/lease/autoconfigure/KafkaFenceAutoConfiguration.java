package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.core.ProducerFactory;

import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * A {@link FencedKafkaTemplate} over Boot's {@link ProducerFactory} (built from {@code spring.kafka.*}), when the
 * application has lease-kafka and spring-kafka and its producers are transactional
 * ({@code spring.kafka.producer.transaction-id-prefix} is set: without transactions the broker cannot fence anything,
 * and an application that sends without them keeps working as it was). The fenced producers' transactional ids start
 * with {@code lease.kafka.transactional-id-prefix}.
 */
@AutoConfiguration(afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass({FencedKafkaTemplate.class, ProducerFactory.class})
@ConditionalOnBean(ProducerFactory.class)
@ConditionalOnProperty(prefix = "spring.kafka.producer", name = "transaction-id-prefix")
@EnableConfigurationProperties(KafkaFenceProperties.class)
public class KafkaFenceAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public KafkaFenceAutoConfiguration() {
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(FencedKafkaTemplate.class)
    FencedKafkaTemplate<?, ?> leaseFencedKafkaTemplate(ProducerFactory<Object, Object> producerFactory,
            KafkaFenceProperties properties) {
        return new FencedKafkaTemplate<>(producerFactory, properties.getTransactionalIdPrefix());
    }
}
