package dev.lease.faults.scenarios.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.client.RestClient;

import dev.lease.LeaseConfigurationException;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.workload.Ledger;
import dev.lease.fence.http.AsyncLedgerService;
import dev.lease.fence.http.FencingTokenHeader;
import dev.lease.testing.TestTiming;

/**
 * The HTTP workload on ZooKeeper leases: the network-freeze scenario with its ledger written through fenced calls to a
 * ledger service ({@code HttpLedgerWrites}: {@code Fencing-Token} header, {@code @FencedRequest}, the service's
 * {@code JdbcFence}) instead of JdbcFence in the holder's JVM. The stale call the scenario forces must be answered
 * 409, and the history checker must see no stale write accepted.
 */
class HttpZooKeeperFaultScenariosTest extends ZooKeeperScenarios {

    @Test
    void networkFreezeWithFencedCalls() throws Exception {
        ZooKeeperFaultScenariosTest.networkFreeze("http-zookeeper-network-freeze", "zookeeper, HTTP ledger",
                "http-zk-freeze", lease -> Ledger.http(postgres.dataSource(), postgres.jdbcUrl(), lease));
    }

    /**
     * An asynchronous fenced handler ({@code @Transactional @FencedRequest} returning a {@code Callable}): the real
     * service refuses to start, naming it. The refusal is a startup check, so its mutant is run here rather than by
     * the fence-mutant run: the service with the refusal removed starts, and a token-7 write held in the callable
     * lands after the token-8 write the fence accepted later.
     */
    @Test
    void asynchronousFencedHandlerIsRefusedAndWithoutTheRefusalAStaleWriteLands() throws Exception {
        Assumptions.assumeTrue(mutant == Mutant.NONE, "the mutant of this row is run by the real run");
        assertThatThrownBy(() -> AsyncLedgerService.start(postgres.jdbcUrl(), false).close())
                .satisfies(failure -> assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@FencedRequest on Writes.later(String, HttpServletRequest)")
                        .hasMessageContaining("after the handler returned"));

        String resource = "async-" + System.nanoTime();
        AsyncLedgerService.gate = new CountDownLatch(1);
        try (ConfigurableApplicationContext mutantService = AsyncLedgerService.start(postgres.jdbcUrl(), true)) {
            RestClient client = RestClient.create("http://127.0.0.1:"
                    + ((WebServerApplicationContext) mutantService).getWebServer().getPort());
            JdbcTemplate jdbc = mutantService.getBean(JdbcTemplate.class);
            CompletableFuture<String> stale = CompletableFuture.supplyAsync(() -> client.post()
                    .uri("/async/{resource}", resource).header(FencingTokenHeader.NAME, "7;lease=\"ledger\"").retrieve()
                    .body(String.class));
            // The handler passed the fence at 7 and committed; its write waits in the callable.
            await().atMost(TestTiming.seconds(30)).until(() -> jdbc.queryForList(
                    "SELECT fence FROM lease_fence WHERE resource = ?", Long.class, resource),
                    f -> f.equals(List.of(7L)));
            assertThat(client.post().uri("/now/{resource}", resource).header(FencingTokenHeader.NAME,
                    "8;lease=\"ledger\"").retrieve().body(String.class)).isEqualTo("written");
            AsyncLedgerService.gate.countDown();
            assertThat(stale.get(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("written");
            assertThat(jdbc.queryForList("SELECT token FROM async_ledger WHERE resource = ? ORDER BY id", Long.class,
                    resource)).as("the ledger: the token-7 write landed after token 8's").containsExactly(8L, 7L);
        }
        finally {
            AsyncLedgerService.gate.countDown();
        }
    }
}
