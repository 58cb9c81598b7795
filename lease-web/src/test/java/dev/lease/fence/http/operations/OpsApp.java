package dev.lease.fence.http.operations;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.fence.http.FencedRequest;
import dev.lease.testing.TestTiming;

/**
 * One instance of a real application as operators run it: Tomcat on a random port, Prometheus' endpoint, CORRECTNESS
 * leases and an election on ZooKeeper (through a link the test can freeze), EFFICIENCY leases in memory, a fenced
 * table on H2 and a {@code @FencedRequest} endpoint, acquire latency as a histogram.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class OpsApp {

    static final String ELECTION = "ops-leader";

    static ConfigurableApplicationContext start(String instance, String zooKeeper) {
        Map<String, Object> properties = new HashMap<>();
        properties.put("server.port", "0");
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.datasource.url", "jdbc:h2:mem:ops-" + instance + ";DB_CLOSE_DELAY=-1");
        properties.put("lease.fence.initialize-schema", "always");
        properties.put("management.endpoints.web.exposure.include", "prometheus,leases,health");
        // The labels docs/operations.md asks applications to add, so that rules and dashboard can tell them apart.
        properties.put("management.metrics.tags.application", "ops");
        properties.put("management.metrics.distribution.percentiles-histogram.lease.acquire", "true");
        properties.put("lease.correctness-backend", "zookeeper");
        properties.put("lease.efficiency-backend", "in-memory");
        properties.put("lease.zookeeper.connect-string", zooKeeper);
        properties.put("lease.zookeeper.session-timeout", TestTiming.seconds(3).toMillis() + "ms");
        properties.put("lease.zookeeper.connection-timeout", TestTiming.seconds(3).toMillis() + "ms");
        properties.put("lease.default-ttl", TestTiming.seconds(3).toMillis() + "ms");
        properties.put("lease.leader.elections." + ELECTION + ".kind", "CORRECTNESS");
        return new SpringApplicationBuilder(OpsApp.class).logStartupInfo(false).properties(properties).run();
    }

    static String port(ConfigurableApplicationContext app) {
        return app.getEnvironment().getRequiredProperty("local.server.port");
    }

    /** Leased work that holds its lease until the test lets it go. */
    @Service
    static class Jobs {

        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);

        /** Read through the proxy, which has no state of its own. */
        public CountDownLatch entered() {
            return entered;
        }

        public CountDownLatch release() {
            return release;
        }

        @Leased(name = "report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public String report(boolean hold) throws InterruptedException {
            if (hold) {
                entered.countDown();
                release.await(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            }
            return "done";
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public long bill(long id, CountDownLatch started) throws InterruptedException {
            started.countDown();
            Thread.sleep(TestTiming.seconds(60).toMillis());
            return LeaseContext.token().value();
        }
    }

    /** The fenced endpoint: refuses requests with no token (428) before any handler code runs. */
    @RestController
    static class Payments {

        @PostMapping("/payments/{id}")
        @Transactional
        @FencedRequest(resource = "payment-#{#id}")
        public String pay(@PathVariable long id) {
            return "paid " + id;
        }
    }
}
