package dev.lease.samples.leader.demo;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import dev.lease.testing.EmbeddedZooKeeper;

/**
 * When {@code reminders.embedded-zookeeper} is true (the default), points {@code lease.zookeeper.connect-string} at
 * the JVM's {@link EmbeddedZooKeeper#shared() shared} ZooKeeper, started on first use, with the lowest precedence: a
 * connect string given explicitly (the demo's proxies, a real ensemble) wins.
 */
class EmbeddedZooKeeperEnvironmentPostProcessor implements EnvironmentPostProcessor {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("reminders.embedded-zookeeper", Boolean.class, false)
                || environment.containsProperty("lease.zookeeper.connect-string")) {
            return;
        }
        environment.getPropertySources().addLast(new MapPropertySource("remindersEmbeddedZooKeeper",
                Map.of("lease.zookeeper.connect-string", EmbeddedZooKeeper.shared().connectString())));
    }
}
