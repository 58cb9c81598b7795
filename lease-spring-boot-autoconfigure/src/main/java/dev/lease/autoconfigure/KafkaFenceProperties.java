package dev.lease.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The Kafka fence ({@code lease.kafka.*}): see {@link KafkaFenceAutoConfiguration}. The connection, serializers and
 * producer settings are Boot's {@code spring.kafka.*}.
 */
@ConfigurationProperties("lease.kafka")
public class KafkaFenceProperties {

    /**
     * Start of the transactional.id of every fenced producer; the lease name follows, percent-encoded. Letters, digits,
     * '.', '_' and '-', ending with '.': a prefixed ACL on it covers exactly the application's fenced producers.
     */
    private String transactionalIdPrefix = "lease.";

    /** Kafka fence settings with their defaults. */
    public KafkaFenceProperties() {
    }

    public String getTransactionalIdPrefix() {
        return transactionalIdPrefix;
    }

    public void setTransactionalIdPrefix(String transactionalIdPrefix) {
        this.transactionalIdPrefix = transactionalIdPrefix;
    }
}
