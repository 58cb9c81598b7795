package dev.lease.autoconfigure.operations;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.TcpProxy;

/**
 * What an operator sees, over HTTP, of a web application on a real ZooKeeper (CORRECTNESS, through a proxy that can
 * freeze its link) and a real Redis (EFFICIENCY): the leases endpoint, the lease health contributor, and the meters in
 * Prometheus' format.
 */
class OperationsEndToEndTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private TestingServer zookeeper;
    private TcpProxy zookeeperLink;
    private EmbeddedRedis redis;
    private ConfigurableApplicationContext app;
    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        zookeeper = new TestingServer(true);
        zookeeperLink = new TcpProxy(zookeeper.getPort());
        redis = EmbeddedRedis.start();
        app = new SpringApplicationBuilder(App.class).logStartupInfo(false).run(
                "--server.port=0",
                "--management.endpoints.web.exposure.include=health,leases,prometheus",
                "--management.endpoint.health.show-components=always",
                "--management.endpoint.health.show-details=always",
                "--lease.correctness-backend=zookeeper", "--lease.efficiency-backend=redis",
                "--lease.zookeeper.connect-string=" + zookeeperLink.address(),
                "--lease.zookeeper.session-timeout=" + seconds(4).toMillis() + "ms",
                "--lease.zookeeper.connection-timeout=" + seconds(4).toMillis() + "ms",
                "--lease.default-ttl=" + seconds(4).toMillis() + "ms",
                "--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redis.port(),
                "--spring.data.redis.timeout=" + EmbeddedRedis.COMMAND_TIMEOUT.toMillis() + "ms",
                "--lease.fence.initialize-schema=always");
    }

    @AfterEach
    void stop() throws Exception {
        callers.shutdownNow();
        if (app != null) {
            app.close();
        }
        zookeeperLink.close();
        redis.close();
        zookeeper.close();
    }

    @Test
    void theLeasesEndpointShowsAHeldLeaseWithTheTokenItsMethodReads() throws Exception {
        Jobs jobs = app.getBean(Jobs.class);
        Holding holding = new Holding();
        Future<Long> call = callers.submit(() -> jobs.bill(7, holding));
        long token = holding.token.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);

        JsonNode leases = get("/leases");
        assertThat(leases.path("routing").path("CORRECTNESS").asString()).isEqualTo("zookeeper");
        assertThat(leases.path("routing").path("EFFICIENCY").asString()).isEqualTo("redis");
        assertThat(leases.path("elections").isArray()).isTrue();
        assertThat(leases.path("held")).hasSize(1);
        JsonNode held = leases.path("held").get(0);
        assertThat(held.path("name").asString()).isEqualTo("invoice-7");
        assertThat(held.path("kind").asString()).isEqualTo("CORRECTNESS");
        assertThat(held.path("backend").asString()).isEqualTo("zookeeper");
        assertThat(held.path("token").asLong()).isEqualTo(token);
        assertThat(held.path("remainingMillis").asLong()).isPositive();
        assertThat(held.path("thread").asString()).isEqualTo(holding.thread);

        holding.release.countDown();
        assertThat(call.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(token);
        assertThat(get("/leases").path("held")).isEmpty();
    }

    @Test
    void theLeasesEndpointListsTheCallersWaitingForAName() throws Exception {
        Jobs jobs = app.getBean(Jobs.class);
        Holding holding = new Holding();
        Future<Long> holder = callers.submit(() -> jobs.bill(11, holding));
        long held = holding.token.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(get("/leases").path("waiting")).as("nobody waits yet").isEmpty();

        Future<Long> first = callers.submit(() -> jobs.billWhenFree(11));
        Future<Long> second = callers.submit(() -> jobs.billWhenFree(11));
        await().atMost(seconds(10)).untilAsserted(() -> {
            JsonNode waiting = get("/leases").path("waiting");
            assertThat(waiting).hasSize(1);
            assertThat(waiting.get(0).path("name").asString()).isEqualTo("invoice-11");
            assertThat(waiting.get(0).path("kind").asString()).isEqualTo("CORRECTNESS");
            assertThat(waiting.get(0).path("threads").asInt()).isEqualTo(2);
            assertThat(java.time.Instant.parse(waiting.get(0).path("since").asString()))
                    .isBefore(java.time.Instant.now().plusSeconds(1));
        });

        holding.release.countDown();
        assertThat(holder.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(held);
        assertThat(first.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isGreaterThan(held);
        assertThat(second.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isGreaterThan(held);
        assertThat(get("/leases").path("waiting")).as("no one waits once both were granted").isEmpty();
    }

    @Test
    void leaseHealthIsDownWhileTheZooKeeperLinkIsFrozenAndTheLossIsCounted() throws Exception {
        assertThat(leaseHealth().path("status").asString()).isEqualTo("UP");
        assertThat(leaseHealth().path("components").path("redis").path("status").asString()).isEqualTo("UP");

        Jobs jobs = app.getBean(Jobs.class);
        Holding holding = new Holding();
        Future<Long> call = callers.submit(() -> jobs.bill(8, holding));
        holding.token.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);

        zookeeperLink.freeze();
        await().atMost(seconds(20)).untilAsserted(() -> {
            JsonNode health = leaseHealth();
            assertThat(health.path("status").asString()).isEqualTo("DOWN");
            assertThat(health.path("components").path("zookeeper").path("status").asString()).isEqualTo("DOWN");
            assertThat(health.path("components").path("redis").path("status").asString()).isEqualTo("UP");
        });
        assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(LeaseLostException.class);
        assertThat(prometheus()).containsPattern("(?m)^lease_lost_total\\{[^}]*cause=\"backend-reported\"[^}]*"
                + "lease_name=\"invoice-#\\{#id}\"[^}]*} 1\\.0$");

        zookeeperLink.unfreeze();
        await().atMost(seconds(30)).untilAsserted(
                () -> assertThat(leaseHealth().path("status").asString()).isEqualTo("UP"));
    }

    @Test
    void aBusyAcquireAndAStaleWriteShowInPrometheus() throws Exception {
        Jobs jobs = app.getBean(Jobs.class);
        Holding holding = new Holding();
        Future<String> first = callers.submit(() -> jobs.report(holding));
        holding.entered.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(jobs.report(new Holding())).as("skipped: another call holds the lease").isNull();
        holding.release.countDown();
        assertThat(first.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("done");

        JdbcFence fence = app.getBean(JdbcFence.class);
        TransactionTemplate transactions = new TransactionTemplate(
                new DataSourceTransactionManager(app.getBean(DataSource.class)));
        transactions.executeWithoutResult(status -> fence.advance("invoice-9", new FencingToken("invoice-9", 5)));
        assertThatThrownBy(() -> transactions.executeWithoutResult(
                status -> fence.advance("invoice-9", new FencingToken("invoice-9", 4))))
                .isInstanceOf(StaleTokenException.class);

        String metrics = prometheus();
        assertThat(metrics).containsPattern("(?m)^lease_acquire_seconds_count\\{[^}]*lease_backend=\"redis\"[^}]*"
                + "lease_name=\"report\",outcome=\"busy\"} 1$");
        assertThat(metrics).containsPattern("(?m)^lease_acquire_seconds_count\\{[^}]*lease_name=\"report\","
                + "outcome=\"acquired\"} 1$");
        assertThat(metrics).containsPattern("(?m)^lease_fence_rejected_total\\{table=\"lease_fence\"} 1\\.0$");
    }

    private JsonNode leaseHealth() throws IOException, InterruptedException {
        return get("/health").path("components").path("lease");
    }

    private JsonNode get(String path) throws IOException, InterruptedException {
        return JSON.readTree(body(path));
    }

    private String prometheus() throws IOException, InterruptedException {
        return body("/prometheus");
    }

    private String body(String path) throws IOException, InterruptedException {
        String port = app.getEnvironment().getRequiredProperty("local.server.port");
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/actuator" + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        // Health answers 503 while DOWN, with the same body.
        assertThat(response.statusCode()).as("GET " + path).isIn(200, 503);
        return response.body();
    }

    /** A call that signals once inside its lease, then holds it until released. */
    static final class Holding {

        final CompletableFuture<Long> token = new CompletableFuture<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile String thread;

        void inside(Long leaseToken) throws InterruptedException {
            thread = Thread.currentThread().getName();
            entered.countDown();
            token.complete(leaseToken);
            release.await();
        }
    }

    /** The application's leased work. */
    static class Jobs {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public long bill(long id, Holding holding) throws InterruptedException {
            long token = LeaseContext.token().value();
            holding.inside(token);
            return token;
        }

        /** Waits for a busy invoice as long as the test may take. */
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, waitFor = "60s")
        public long billWhenFree(long id) {
            return LeaseContext.token().value();
        }

        @Leased(name = "report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public String report(Holding holding) throws InterruptedException {
            holding.inside(null);
            return "done";
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        Jobs jobs() {
            return new Jobs();
        }

        @Bean
        DataSource dataSource() {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:operations-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
            return h2;
        }
    }
}
