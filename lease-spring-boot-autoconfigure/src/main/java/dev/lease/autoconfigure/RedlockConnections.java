package dev.lease.autoconfigure;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.LeaseConfigurationException;
import dev.lease.redis.RedlockLeaseBackend;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;

/**
 * One Lettuce connection factory per node of {@code lease.redlock.nodes}, built from its URI and owned here (not
 * beans, so that the application's own {@code RedisConnectionFactory} is still auto-configured), destroyed with the
 * context after the backend.
 */
final class RedlockConnections implements AutoCloseable {

    /** Long enough to ride out a slow node; each call of the backend waits no longer than its per-node timeout. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    private static final Pattern USER_INFO = Pattern.compile("//[^/@]*@");

    private final List<LettuceConnectionFactory> factories;

    private RedlockConnections(List<LettuceConnectionFactory> factories) {
        this.factories = factories;
    }

    /**
     * Parses and connects the nodes.
     *
     * @throws LeaseConfigurationException naming {@code lease.redlock.nodes} when a URI is malformed, or when the
     *         number of nodes is even or below 3
     */
    static RedlockConnections open(RedlockProperties properties, List<RedlockClientConfigurationCustomizer> customizers) {
        List<String> uris = properties.getNodes().stream().map(String::trim).filter(uri -> !uri.isEmpty()).toList();
        if (uris.isEmpty()) {
            throw new LeaseConfigurationException("Leases are routed to redlock, but lease.redlock.nodes is empty.",
                    "list 3 or 5 independent Redis masters: lease.redlock.nodes: redis://host1:6379, "
                            + "redis://host2:6379, redis://host3:6379.");
        }
        if (uris.size() < 3 || uris.size() % 2 == 0) {
            throw new LeaseConfigurationException(RedlockLeaseBackend.oddNodesMessage(uris.size()),
                    "set lease.redlock.nodes to 3 or 5 redis:// URIs of independent masters (no replicas of each "
                            + "other), or use lease.efficiency-backend: redis for a single Redis.");
        }
        List<RedisStandaloneConfiguration> nodes = new ArrayList<>();
        for (int i = 0; i < uris.size(); i++) {
            nodes.add(parse(i + 1, uris.get(i)));
        }
        List<LettuceConnectionFactory> factories = new ArrayList<>();
        try {
            for (int i = 0; i < nodes.size(); i++) {
                factories.add(factory(nodes.get(i), uris.get(i).startsWith("rediss:"), properties, customizers));
            }
        }
        catch (RuntimeException ex) {
            factories.forEach(LettuceConnectionFactory::destroy);
            throw ex;
        }
        return new RedlockConnections(List.copyOf(factories));
    }

    List<LettuceConnectionFactory> factories() {
        return factories;
    }

    @Override
    public void close() {
        factories.forEach(LettuceConnectionFactory::destroy);
    }

    /** A URI for messages: the user info (which may hold a password) replaced. */
    static String redact(String uri) {
        return USER_INFO.matcher(uri).replaceFirst("//***@");
    }

    private static RedisStandaloneConfiguration parse(int position, String uri) {
        RedisURI parsed;
        try {
            if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
                throw new IllegalArgumentException("it does not start with redis:// or rediss://");
            }
            parsed = RedisURI.create(uri);
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException("lease.redlock.nodes entry " + position + " ('" + redact(uri)
                    + "') is not a Redis URI: " + ex.getMessage() + ".",
                    "write each node as redis://[user:password@]host:port[/database], separated by commas.");
        }
        RedisStandaloneConfiguration node = new RedisStandaloneConfiguration(parsed.getHost(), parsed.getPort());
        node.setDatabase(parsed.getDatabase());
        // Credentials from the URI's user info as Lettuce reads it: "user:password", ":password" or "password".
        String userInfo = URI.create(uri).getRawUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            String user = colon < 0 ? "" : decode(userInfo.substring(0, colon));
            String password = decode(colon < 0 ? userInfo : userInfo.substring(colon + 1));
            if (!user.isEmpty()) {
                node.setUsername(user);
            }
            if (!password.isEmpty()) {
                node.setPassword(password);
            }
        }
        return node;
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }

    private static LettuceConnectionFactory factory(RedisStandaloneConfiguration node, boolean ssl,
            RedlockProperties properties, List<RedlockClientConfigurationCustomizer> customizers) {
        LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
                .commandTimeout(COMMAND_TIMEOUT).shutdownTimeout(Duration.ZERO)
                .clientOptions(ClientOptions.builder()
                        .socketOptions(SocketOptions.builder().connectTimeout(properties.getConnectTimeout()).build())
                        .build());
        if (ssl) {
            client.useSsl();
        }
        customizers.forEach(customizer -> customizer.customize(node, client));
        LettuceConnectionFactory factory = new LettuceConnectionFactory(node, client.build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
