package dev.lease.autoconfigure;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;

/**
 * Customizes the Lettuce connection the Redlock backend opens to each node of {@code lease.redlock.nodes} (TLS
 * settings, client name, timeouts). Customizers run in {@code @Order}, once per node. The connection must stay one
 * shared standalone connection: the backend refuses a pooled or cluster one.
 *
 * <pre>{@code
 * @Bean
 * RedlockClientConfigurationCustomizer leaseClientName() {
 *     return (node, client) -> client.clientName("orders-leases");
 * }
 * }</pre>
 */
@FunctionalInterface
public interface RedlockClientConfigurationCustomizer {

    /**
     * Customizes the client configuration of one node before its connection factory is built.
     *
     * @param node the node's host, port, credentials and database, as parsed from its URI
     * @param client the client configuration builder, preset with the timeouts from {@code lease.redlock.*}
     */
    void customize(RedisStandaloneConfiguration node, LettuceClientConfigurationBuilder client);
}
