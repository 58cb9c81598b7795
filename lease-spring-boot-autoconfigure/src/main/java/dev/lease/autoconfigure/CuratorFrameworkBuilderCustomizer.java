package dev.lease.autoconfigure;

import org.apache.curator.framework.CuratorFrameworkFactory;

/**
 * Customizes the Curator client the ZooKeeper lease backend builds from {@code lease.zookeeper.*} (it does not touch
 * an application's own {@code CuratorFramework} bean). Customizers run in {@code @Order} after the defaults are set,
 * so they may replace any of them: the retry policy ({@code ExponentialBackoffRetry(100 ms, 5, 2 s)} by default),
 * an ACL provider, authorization, a compression provider. Changing the connect string, the session timeout or the
 * connection timeout here bypasses the startup checks of those properties: set them with the properties instead.
 *
 * <p>For authentication use {@code lease.zookeeper.authorization.scheme} and {@code .credentials}: they set both the
 * identity and a creator-only ACL provider. {@code authorization(...)} alone authenticates the client but still
 * creates world-writable znodes (Curator's default ACL), which any client of the ensemble can delete.
 *
 * <pre>{@code
 * @Bean
 * CuratorFrameworkBuilderCustomizer zooKeeperRetries() {
 *     return builder -> builder.retryPolicy(new ExponentialBackoffRetry(200, 8, 5_000));
 * }
 * }</pre>
 */
@FunctionalInterface
public interface CuratorFrameworkBuilderCustomizer {

    /**
     * Customizes the builder before the client is built.
     *
     * @param builder the builder, with the defaults already set
     */
    void customize(CuratorFrameworkFactory.Builder builder);
}
