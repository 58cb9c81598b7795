package dev.lease.samples.billing.demo;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * When {@code billing.embedded-servers} is true (the default profile), starts {@link EmbeddedServers} and points the
 * application at them, with the lowest precedence: any {@code lease.zookeeper.connect-string} or
 * {@code spring.datasource.url} given explicitly wins.
 */
class EmbeddedServersEnvironmentPostProcessor implements EnvironmentPostProcessor {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("billing.embedded-servers", Boolean.class, false)) {
            return;
        }
        EmbeddedServers servers = EmbeddedServers.shared();
        environment.getPropertySources().addLast(new MapPropertySource("billingEmbeddedServers", Map.of(
                "lease.zookeeper.connect-string", servers.zookeeperConnectString(),
                "spring.datasource.url", servers.jdbcUrl())));
    }
}
