package dev.lease.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.spi.LeaseBackend;

/**
 * An operator deletes a lease's counter znode: its version, the token, starts again from 1. Every write under the
 * new, low tokens must be refused by the fence, with a message that points at the reset, never accepted.
 */
class CounterResetTest {

    private TestingServer server;
    private CuratorFramework client;
    private CuratorFramework operator;
    private LeaseEngine engine;
    private EmbeddedDatabase db;

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        client = ZooKeeperTesting.client(server.getConnectString(), Duration.ofSeconds(30));
        operator = ZooKeeperTesting.client(server.getConnectString(), Duration.ofSeconds(30));
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, new ZooKeeperLeaseBackend(client, "/leases", Duration.ofSeconds(30)));
        engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        db = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    @AfterEach
    void stop() throws Exception {
        engine.close();
        operator.close();
        client.close();
        server.close();
        db.shutdown();
    }

    @Test
    void tokensRestartedByADeletedCounterAreRefusedNeverAccepted() throws Exception {
        JdbcFence fence = new JdbcFence(new JdbcTemplate(db));
        fence.createSchema();
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(db));
        LeaseSpec spec = LeaseSpec.of("ledger", LeaseKind.CORRECTNESS);
        long before = 0;
        for (int i = 0; i < 15; i++) {
            before = engine.execute(spec, lease -> {
                tx.executeWithoutResult(s -> fence.advance("ledger", lease.token()));
                return lease.token().value();
            });
        }
        assertThat(fence.current("ledger")).hasValue(before);

        operator.delete().deletingChildrenIfNeeded().forPath("/leases/ledger");

        long after = engine.execute(spec, lease -> {
            assertThatThrownBy(() -> tx.executeWithoutResult(s -> fence.advance("ledger", lease.token())))
                    .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                        assertThat(stale.current()).isEqualTo(15);
                        assertThat(stale.fenceFarAhead()).isTrue();
                    })
                    .hasMessageContaining("counter was reset").hasMessageContaining("UPDATE lease_fence");
            return lease.token().value();
        });
        assertThat(after).as("token after the reset").isLessThan(before);
        assertThat(fence.current("ledger")).as("fence unchanged by the refused write").hasValue(before);
    }
}
