package dev.lease.samples.reports.demo;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * When {@code reports.embedded-redis} is true (the default profile), starts {@link EmbeddedRedis} and points
 * {@code spring.data.redis.*} at it, with the lowest precedence.
 */
class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("reports.embedded-redis", Boolean.class, false)) {
            return;
        }
        EmbeddedRedis redis = EmbeddedRedis.shared();
        environment.getPropertySources().addLast(new MapPropertySource("reportsEmbeddedRedis", Map.of(
                "spring.data.redis.host", "127.0.0.1",
                "spring.data.redis.port", redis.port())));
    }
}
