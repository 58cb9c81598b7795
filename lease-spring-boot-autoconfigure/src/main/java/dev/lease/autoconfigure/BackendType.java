package dev.lease.autoconfigure;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

import dev.lease.etcd.EtcdLeaseBackend;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.kubernetes.KubernetesLeaseBackend;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.redis.RedlockLeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The backends this starter configures: the one owner of their ids (as {@code lease.*backend} names them), of how each
 * becomes available, of whether it must be named to be created at all, and of reading the {@code lease.*backend}
 * properties that name them. Whether a backend issues fencing tokens is the backend's own to say, once it exists.
 */
enum BackendType {

    ZOOKEEPER(ZooKeeperLeaseBackend.ID, false, "add org.apache.curator:curator-framework and set "
            + "lease.zookeeper.connect-string (or define a CuratorFramework bean)."),

    REDIS(RedisLeaseBackend.ID, false, "add spring-boot-starter-data-redis and configure spring.data.redis.*."),

    /** Named only: the nodes of lease.redlock.nodes are no reason to pick it over another backend silently. */
    REDLOCK(RedlockLeaseBackend.ID, true, "set lease.redlock.nodes to 3 or 5 redis:// URIs of independent Redis "
            + "masters (lettuce-core and spring-data-redis on the classpath); EFFICIENCY leases only."),

    JDBC(JdbcLeaseBackend.ID, false, "add spring-boot-starter-jdbc and configure one DataSource "
            + "(spring.datasource.*), or give the lease backend a pool of its own with lease.jdbc.datasource.url (which "
            + "also works with no application DataSource or several)."),

    /** Named, or a KubernetesClient bean: the fabric8 client on the classpath alone does not mean "lease on it". */
    KUBERNETES(KubernetesLeaseBackend.ID, false, "add io.fabric8:kubernetes-client and set lease.backend: kubernetes "
            + "(or define a KubernetesClient bean); fenced on Kubernetes 1.35 or later."),

    ETCD(EtcdLeaseBackend.ID, false, "add io.etcd:jetcd-core and set lease.etcd.endpoints (or define an "
            + "io.etcd.jetcd.Client bean)."),

    /** Never picked silently: an application that forgot its real backend must fail, not lock within one JVM. */
    IN_MEMORY(InMemoryLeaseBackend.ID, true, "set lease.backend: in-memory (or name it in lease.correctness-backend / "
            + "lease.efficiency-backend).");

    /** The properties that name backends. */
    private static final List<String> PROPERTIES = List.of("lease.backend", "lease.correctness-backend",
            "lease.efficiency-backend");

    /** The id in {@code lease.backend} and in logs. */
    final String id;

    /** Whether the backend is created only when a {@code lease.*backend} property names it. */
    final boolean onlyWhenNamed;

    /** What makes it available, for startup failures. */
    final String howToEnable;

    BackendType(String id, boolean onlyWhenNamed, String howToEnable) {
        this.id = id;
        this.onlyWhenNamed = onlyWhenNamed;
        this.howToEnable = howToEnable;
    }

    static Optional<BackendType> of(String id) {
        String wanted = id.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(type -> type.id.equals(wanted)).findFirst();
    }

    static List<String> ids() {
        return Arrays.stream(values()).map(type -> type.id).toList();
    }

    /** The {@code lease.*backend} properties set in {@code environment}: their values, trimmed, by property. */
    static Map<String, String> named(Environment environment) {
        Binder binder = Binder.get(environment);
        Map<String, String> named = new LinkedHashMap<>();
        for (String property : PROPERTIES) {
            String value = binder.bind(property, String.class).map(String::trim).orElse("");
            if (!value.isEmpty()) {
                named.put(property, value);
            }
        }
        return named;
    }

    /** The first of {@code named} ({@link #named}) that names this backend, as {@code property=value}. */
    Optional<String> namedIn(Map<String, String> named) {
        return named.entrySet().stream().filter(entry -> entry.getValue().equalsIgnoreCase(id))
                .map(entry -> entry.getKey() + "=" + entry.getValue()).findFirst();
    }

    /** What makes each backend that need not be named available, for a startup that finds none. */
    static String howToEnableAny() {
        return String.join(" Or ", Arrays.stream(values()).filter(type -> !type.onlyWhenNamed)
                .map(type -> type.howToEnable).toList());
    }
}
