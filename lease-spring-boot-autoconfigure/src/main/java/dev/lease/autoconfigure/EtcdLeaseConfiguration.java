package dev.lease.autoconfigure;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;
import dev.lease.etcd.EtcdLeaseBackend;

/**
 * The etcd backend, available when jetcd is on the classpath and either {@code lease.etcd.endpoints} is set or the
 * application has an {@link Client io.etcd.jetcd.Client} bean (which is then reused and left to its owner). Otherwise a
 * client is built from the endpoints and the application's {@link EtcdClientBuilderCustomizer}s, and closed on
 * shutdown; it pings a silent member after {@link #KEEPALIVE_TIME} and gives it up {@link #KEEPALIVE_TIMEOUT} later. Startup fails at once when every endpoint refuses the connection, and, once leases are routed to etcd,
 * when no member answers a linearizable read (no leader, no quorum) within a few seconds.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Client.class)
@ConditionalOnLeaseBackend(BackendType.ETCD)
@Conditional(EtcdLeaseConfiguration.EndpointsOrClient.class)
@EnableConfigurationProperties(EtcdLeaseProperties.class)
class EtcdLeaseConfiguration {

    private static final Log log = LogFactory.getLog(EtcdLeaseConfiguration.class);

    /** How long startup waits for etcd: the probe of the endpoints, then the first linearizable read. */
    static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);

    /**
     * How long a connection may be silent before the client pings the member: the shortest gRPC Java honours (it
     * raises anything shorter to 10 s), and above etcd's {@code --grpc-keepalive-min-time} (5 s by default), below which
     * etcd closes the connection for too many pings. jetcd's default is 30 s.
     */
    static final Duration KEEPALIVE_TIME = Duration.ofSeconds(10);

    /**
     * How long a ping may go unanswered before the connection is closed and calls go to the other members: a paused
     * member (its TCP connection open, silent) otherwise keeps a share of the calls. jetcd's default is 10 s.
     */
    static final Duration KEEPALIVE_TIMEOUT = Duration.ofSeconds(3);

    // Pings only while calls are out (jetcd pings idle connections too): etcd refuses pings on a connection without
    // streams (its enforcement policy does not permit them) and closes it after a few.
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(Client.class)
    Client leaseEtcdClient(EtcdLeaseProperties etcd, ObjectProvider<EtcdClientBuilderCustomizer> customizers) {
        List<String> endpoints = endpoints(etcd);
        ConnectProbe.Failures failed = ConnectProbe.probe(addresses(endpoints), STARTUP_TIMEOUT);
        if (!failed.isEmpty()) {
            throw failed.unreachable("etcd", String.join(",", endpoints), "endpoint", "lease.etcd.endpoints",
                    "start etcd");
        }
        ClientBuilder builder = Client.builder().endpoints(endpoints.toArray(String[]::new))
                .keepaliveTime(KEEPALIVE_TIME)
                .keepaliveTimeout(KEEPALIVE_TIMEOUT)
                .keepaliveWithoutCalls(false);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(EtcdLeaseBackend.class)
    EtcdLeaseBackend etcdLeaseBackend(Client client, EtcdLeaseProperties etcd) {
        try {
            return new EtcdLeaseBackend(client, etcd.getKeyPrefix());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(ex.getMessage(), "set lease.etcd.key-prefix to a prefix such as /leases/.");
        }
    }

    /** A linearizable read when leases are routed to etcd; an application that only reads etcd is not held up by it. */
    @Bean
    RoutedBackendCheck etcdLeaseBackendAnswers(EtcdLeaseProperties etcd) {
        return router -> RoutedBackendCheck.routedTo(router, EtcdLeaseBackend.class)
                .forEach(backend -> probe(backend, etcd));
    }

    private static void probe(EtcdLeaseBackend backend, EtcdLeaseProperties etcd) {
        List<String> endpoints = etcd.getEndpoints();
        String where = endpoints != null && !endpoints.isEmpty() ? "at '" + String.join(",", endpoints) + "'"
                : "(the application's io.etcd.jetcd.Client)";
        try {
            var details = backend.checkHealth(STARTUP_TIMEOUT);
            log.info("etcd leases under key prefix " + details.get("keyPrefix") + " " + where + " (member "
                    + details.get("member") + ", raft term " + details.get("raftTerm") + ")");
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LeaseConfigurationException("Interrupted while checking etcd " + where + ".",
                    "start the application again.");
        }
        catch (Exception ex) {
            throw new LeaseConfigurationException("Leases are routed to etcd, but etcd " + where
                    + " did not answer a linearizable read within " + Durations.format(STARTUP_TIMEOUT) + ": "
                    + ex.getMessage() + ".",
                    "check that a quorum of the etcd cluster is up and reachable, and fix lease.etcd.endpoints; or "
                            + "route leases to another backend with lease.backend.");
        }
    }

    private static List<String> endpoints(EtcdLeaseProperties etcd) {
        List<String> configured = etcd.getEndpoints() == null ? List.of()
                : etcd.getEndpoints().stream().map(String::trim).filter(e -> !e.isEmpty()).toList();
        if (configured.isEmpty()) {
            throw new LeaseConfigurationException("lease.etcd.endpoints is empty.",
                    "set it to the etcd client URLs, such as 'http://etcd1:2379,http://etcd2:2379,http://etcd3:2379'.");
        }
        return configured;
    }

    private static List<InetSocketAddress> addresses(List<String> endpoints) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String endpoint : endpoints) {
            URI uri;
            try {
                uri = URI.create(endpoint);
            }
            catch (IllegalArgumentException ex) {
                throw notAnEndpoint(endpoint);
            }
            if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
                throw notAnEndpoint(endpoint);
            }
            addresses.add(InetSocketAddress.createUnresolved(uri.getHost(), uri.getPort() > 0 ? uri.getPort() : 2379));
        }
        return addresses;
    }

    private static LeaseConfigurationException notAnEndpoint(String endpoint) {
        return new LeaseConfigurationException("lease.etcd.endpoints has '" + endpoint.replaceAll("\\p{Cntrl}", "?")
                + "', which is not an etcd client URL.",
                "write each endpoint as a URL with scheme, host and port, such as 'http://127.0.0.1:2379'.");
    }

    /** Endpoints to build a client from, or a client to reuse. */
    static final class EndpointsOrClient extends AnyNestedCondition {

        EndpointsOrClient() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty("lease.etcd.endpoints")
        static final class Endpoints {
        }

        @ConditionalOnProperty("lease.etcd.endpoints[0]")
        static final class IndexedEndpoints {
        }

        @ConditionalOnBean(type = "io.etcd.jetcd.Client")
        static final class ClientBean {
        }
    }
}
