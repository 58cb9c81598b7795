package dev.lease.autoconfigure.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.zookeeper.ZooKeeperTesting;
import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.Leased;
import dev.lease.autoconfigure.JdbcFenceAutoConfiguration;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.TcpProxy;

/**
 * The reason this project exists, end to end with two application instances: A holds a CORRECTNESS lease on
 * ZooKeeper and is paused (its network frozen longer than the session timeout, and its thread parked where it
 * cannot notice the interrupt); B takes the lease with a higher token and bills; A wakes up and tries to write with
 * its old token. The table must refuse A, keep B's write, and A's caller must learn that the lease was lost.
 */
class PausedHolderEndToEndTest {

    private static final Duration SESSION = Duration.ofSeconds(3);

    private TestingServer server;
    private TcpProxy proxyOfA;
    private ConfigurableApplicationContext instanceA;
    private ConfigurableApplicationContext instanceB;
    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        proxyOfA = new TcpProxy(server.getPort());
        String db = "jdbc:h2:mem:paused-holder-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
        instanceA = instance(proxyOfA.address(), db);
        instanceB = instance(server.getConnectString(), db);
        JdbcTemplate jdbc = instanceB.getBean(JdbcTemplate.class);
        jdbc.execute("CREATE TABLE invoice (id BIGINT PRIMARY KEY, billed_by VARCHAR(10), billed_with BIGINT)");
        jdbc.update("INSERT INTO invoice (id) VALUES (42)");
    }

    @AfterEach
    void stop() throws Exception {
        callers.shutdownNow();
        for (AutoCloseable c : new AutoCloseable[] {instanceA, instanceB, proxyOfA, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static ConfigurableApplicationContext instance(String connectString, String db) {
        return new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE).logStartupInfo(false)
                .properties(Map.of("lease.backend", "zookeeper", "lease.zookeeper.connect-string", connectString,
                        "lease.zookeeper.session-timeout", SESSION.toMillis() + "ms",
                        "lease.default-ttl", SESSION.toMillis() + "ms", "paused-holder.db", db))
                .run();
    }

    @Test
    void aHolderThatWakesUpAfterLosingItsLeaseCannotWrite() throws Exception {
        Billing a = instanceA.getBean(Billing.class);
        Billing b = instanceB.getBean(Billing.class);
        a.pauseAfterTakingTheLease();
        Future<?> callOfA = callers.submit(() -> a.bill(42, "A"));
        FencingToken tokenOfA = a.awaitHolding();

        proxyOfA.freeze();
        b.bill(42, "B"); // waits until ZooKeeper expired A's session and granted the lease to B
        FencingToken tokenOfB = b.lastToken();
        assertThat(tokenOfB.value()).isGreaterThan(tokenOfA.value());

        a.resume();
        assertThatThrownBy(() -> callOfA.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(LeaseLostException.class).hasMessageContaining("invoice-42")
                .hasMessageContaining("token " + tokenOfA.value())
                .cause().isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                    assertThat(stale.presented()).isEqualTo(tokenOfA);
                    assertThat(stale.current()).isEqualTo(tokenOfB.value());
                });
        assertThat(a.wasInterruptedWhilePaused()).as("A's leased method was interrupted").isTrue();
        Map<String, Object> invoice = instanceB.getBean(JdbcTemplate.class)
                .queryForMap("SELECT billed_by, billed_with FROM invoice WHERE id = 42");
        assertThat(invoice).containsEntry("BILLED_BY", "B").containsEntry("BILLED_WITH", tokenOfB.value());
    }

    /** The billing service of one instance; A's copy can be told to freeze right after it takes the lease. */
    static class Billing {

        private final JdbcTemplate jdbc;
        private final JdbcFence fence;
        private final CountDownLatch holding = new CountDownLatch(1);
        private final CountDownLatch resume = new CountDownLatch(1);
        private final AtomicBoolean pause = new AtomicBoolean();
        private final AtomicBoolean interruptedWhilePaused = new AtomicBoolean();
        private final AtomicReference<FencingToken> lastToken = new AtomicReference<>();

        Billing(JdbcTemplate jdbc, JdbcFence fence) {
            this.jdbc = jdbc;
            this.fence = fence;
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, waitFor = "30s")
        @Transactional
        public void bill(long id, String by) {
            FencingToken token = LeaseContext.token();
            lastToken.set(token);
            holding.countDown();
            if (pause.get()) {
                freezeUntilResumed();
            }
            fence.advance("invoice-" + id, token);
            jdbc.update("UPDATE invoice SET billed_by = ?, billed_with = ? WHERE id = ?", by, token.value(), id);
        }

        /** A stopped process does not run its interrupt handlers: it only notices once it runs again. */
        private void freezeUntilResumed() {
            while (true) {
                try {
                    if (resume.await(seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
                        return;
                    }
                }
                catch (InterruptedException ex) {
                    interruptedWhilePaused.set(true);
                }
            }
        }

        public void pauseAfterTakingTheLease() {
            pause.set(true);
        }

        public FencingToken awaitHolding() throws InterruptedException {
            assertThat(holding.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("holding the lease").isTrue();
            return lastToken.get();
        }

        public void resume() {
            resume.countDown();
        }

        public FencingToken lastToken() {
            return lastToken.get();
        }

        public boolean wasInterruptedWhilePaused() {
            return interruptedWhilePaused.get();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @ImportAutoConfiguration({LeaseAutoConfiguration.class,
            JdbcFenceAutoConfiguration.class})
    static class Instance {

        @Bean
        DataSource dataSource(org.springframework.core.env.Environment env) {
            return new SimpleDriverDataSource(new org.h2.Driver(), env.getRequiredProperty("paused-holder.db"), "sa", "");
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Billing billing(JdbcTemplate jdbc, JdbcFence fence) {
            return new Billing(jdbc, fence);
        }
    }
}
