package dev.lease.autoconfigure;

import io.etcd.jetcd.ClientBuilder;

/**
 * Customizes the jetcd client the etcd lease backend builds from {@code lease.etcd.endpoints} when the application has
 * no {@code io.etcd.jetcd.Client} bean (it does not touch an application's own client): credentials, TLS, timeouts.
 * Customizers run in {@code @Order}.
 *
 * <pre>{@code
 * @Bean
 * EtcdClientBuilderCustomizer leaseEtcdCredentials(@Value("${etcd.password}") String password) {
 *     return builder -> builder.user(ByteSequence.from("leases", UTF_8)).password(ByteSequence.from(password, UTF_8));
 * }
 * }</pre>
 */
@FunctionalInterface
public interface EtcdClientBuilderCustomizer {

    /**
     * Customizes the builder before the client is built.
     *
     * @param builder the builder, with the endpoints already set
     */
    void customize(ClientBuilder builder);
}
