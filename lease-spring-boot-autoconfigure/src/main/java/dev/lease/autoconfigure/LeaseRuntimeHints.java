package dev.lease.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;

/**
 * What a native image must keep for the auto-configuration (registered in {@code META-INF/spring/aot.factories}): the
 * {@code lease.*} properties classes, bound by reflection (Boot's AOT registers those of the configurations it
 * processes; this covers every one, whichever backend is active at build time), and the configuration metadata that
 * {@link UnknownProperties} reads to refuse unknown {@code lease.*} keys.
 */
class LeaseRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        BindableRuntimeHintsRegistrar.forTypes(LeaseProperties.class, JdbcLeaseProperties.class,
                JdbcFenceProperties.class, ZooKeeperLeaseProperties.class, RedisLeaseProperties.class,
                RedlockProperties.class, KubernetesLeaseProperties.class, EtcdLeaseProperties.class,
                LeaderElectionProperties.class, LeaseHealthProperties.class, OnceProperties.class,
                KafkaFenceProperties.class).registerHints(hints, classLoader);
        hints.resources().registerPattern("META-INF/spring-configuration-metadata.json");
    }
}
