package dev.lease.samples.reports.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import dev.lease.testing.EmbeddedRedis;

/**
 * When {@code reports.embedded-redis} is true (the default profile), starts an {@link EmbeddedRedis} and points
 * {@code spring.data.redis.*} at it, with the lowest precedence.
 */
class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor {

    /** One server per JVM: the demo runs its three instances in one JVM, and they must share the store. */
    private static EmbeddedRedis shared;

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("reports.embedded-redis", Boolean.class, false)) {
            return;
        }
        environment.getPropertySources().addLast(new MapPropertySource("reportsEmbeddedRedis", Map.of(
                "spring.data.redis.host", "127.0.0.1",
                "spring.data.redis.port", shared().port())));
    }

    /** Started on first use and stopped when the JVM exits, not with a context: the other instances still use it. */
    private static synchronized EmbeddedRedis shared() {
        if (shared == null) {
            try {
                shared = EmbeddedRedis.start();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not start the embedded redis-server", ex);
            }
            EmbeddedRedis started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                }
                catch (IOException ex) {
                    // The JVM is exiting.
                }
            }, "embedded-redis-stop"));
        }
        return shared;
    }
}
