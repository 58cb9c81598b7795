package dev.lease.autoconfigure;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import com.zaxxer.hikari.HikariDataSource;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.Leased;
import dev.lease.fence.JdbcFence;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * Issue 32, item 1, on a real PostgreSQL behind Boot's own HikariCP pool of ten connections: ten {@code @Transactional}
 * callers, each holding one of those connections from before it asks for the lease, must not starve the lease
 * bookkeeping; and when a connection really cannot be had, the caller is told which pool and which setting.
 */
class JdbcLeaseBookkeepingPoolPostgresTest {

    private static final int CALLERS = 10;

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

    private ConfigurableApplicationContext context;

    @BeforeAll
    static void createTables() {
        new JdbcTemplate(POSTGRES.get().dataSource())
                .execute("CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
    }

    @AfterEach
    void stop() {
        callers.shutdownNow();
        if (context != null) {
            context.close();
        }
    }

    /**
     * Every connection of the application's pool is held by a transaction that waits for the lease, at the same
     * moment (a barrier inside the transactions): a grant, renewal or release that needed one of them would wait
     * for a transaction that waits for the lease.
     */
    @Test
    void tenTransactionsHoldingEveryApplicationConnectionStillGetTheirLeases() throws Exception {
        context = start(Map.of());
        new JdbcTemplate(context.getBean(DataSource.class)).update("INSERT INTO account (id, balance) VALUES (1, 0)");
        Transfers transfers = context.getBean(Transfers.class);
        CyclicBarrier allInTransactions = new CyclicBarrier(CALLERS);
        List<Future<FencingToken>> deposits = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            deposits.add(callers.submit(() -> transfers.payIn(1, 100, allInTransactions)));
        }
        List<Long> tokens = new ArrayList<>();
        for (Future<FencingToken> deposit : deposits) {
            tokens.add(deposit.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS).value());
        }
        assertThat(tokens).doesNotHaveDuplicates();
        assertThat(new JdbcTemplate(context.getBean(DataSource.class))
                .queryForObject("SELECT balance FROM account WHERE id = 1", Long.class)).isEqualTo(CALLERS * 100L);
        assertThat(((HikariDataSource) context.getBean(DataSource.class)).getMaximumPoolSize()).isEqualTo(CALLERS);
    }

    /** The pool of its own has one connection, held here: the grant cannot get one, and says why. */
    @Test
    void aGrantThatGetsNoConnectionNamesThePoolAndTheSetting() throws Exception {
        context = start(Map.of("lease.jdbc.datasource.url", url(), "lease.jdbc.datasource.username", "postgres",
                "lease.jdbc.datasource.maximum-pool-size", "1"));
        LeaseTemplate leases = context.getBean(LeaseTemplate.class);
        try (Connection held = context.getBean(LeaseBookkeepingPool.class).dataSource().getConnection()) {
            assertThatThrownBy(() -> leases.acquire(LeaseSpec.of("no-connection", LeaseKind.CORRECTNESS)))
                    .isInstanceOf(LeaseUnavailableException.class)
                    .hasMessageContaining("pool 'lease-bookkeeping'")
                    .hasMessageContaining("lease.jdbc.datasource.maximum-pool-size");
        }
    }

    /** A held lease whose renewal gets no connection is lost, and the loss names the pool and the setting. */
    @Test
    void aRenewalThatGetsNoConnectionLosesTheLeaseNamingThePoolAndTheSetting() throws Exception {
        context = start(Map.of("lease.jdbc.datasource.url", url(), "lease.jdbc.datasource.username", "postgres",
                "lease.jdbc.datasource.maximum-pool-size", "1"));
        Duration ttl = seconds(3);
        Lease lease = context.getBean(LeaseTemplate.class)
                .acquire(LeaseSpec.of("renewal-without-connection", LeaseKind.CORRECTNESS).withTtl(ttl));
        try (Connection held = context.getBean(LeaseBookkeepingPool.class).dataSource().getConnection()) {
            await().atMost(ttl.plus(seconds(10))).pollInterval(millis(50)).until(() -> !lease.isValid());
            assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("pool 'lease-bookkeeping'")
                    .hasMessageContaining("lease.jdbc.datasource.maximum-pool-size");
        }
        lease.close();
    }

    /**
     * Sharing the application's pool on purpose, every connection of it held by the application: the grant's message
     * names the application's pool and the setting that gives lease bookkeeping a pool of its own.
     */
    @Test
    void onTheSharedApplicationPoolAStarvedGrantNamesThatPoolAndTheSetting() throws Exception {
        context = start(Map.of("lease.jdbc.datasource.pool", "application",
                "spring.datasource.hikari.maximum-pool-size", "2", "spring.datasource.hikari.pool-name", "orders",
                "spring.datasource.hikari.connection-timeout", "250"));
        DataSource application = context.getBean(DataSource.class);
        assertThat(context.getBean(LeaseBookkeepingPool.class).dataSource().unwrap(HikariDataSource.class))
                .isSameAs(application);
        LeaseTemplate leases = context.getBean(LeaseTemplate.class);
        try (Connection first = application.getConnection(); Connection second = application.getConnection()) {
            assertThatThrownBy(() -> leases.acquire(LeaseSpec.of("shared-pool", LeaseKind.CORRECTNESS)))
                    .isInstanceOf(LeaseUnavailableException.class)
                    .hasMessageContaining("pool 'orders'")
                    .hasMessageContaining("lease.jdbc.datasource.pool");
        }
    }

    private static String url() {
        return POSTGRES.get().jdbcUrl();
    }

    private ConfigurableApplicationContext start(Map<String, Object> properties) {
        Map<String, Object> all = new HashMap<>(Map.of("spring.datasource.url", url(),
                "spring.datasource.username", "postgres", "spring.datasource.hikari.maximum-pool-size", CALLERS,
                "lease.backend", "jdbc", "lease.jdbc.initialize-schema", "always",
                "lease.fence.initialize-schema", "always", "test.wait-for", seconds(20).toMillis() + "ms"));
        all.putAll(properties);
        return new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE).logStartupInfo(false)
                .properties(all).run();
    }

    /** The README's {@code @Transactional} facade: the transaction opens before the lease is asked for. */
    static class Transfers {

        private final Accounts accounts;

        Transfers(Accounts accounts) {
            this.accounts = accounts;
        }

        @Transactional
        public FencingToken payIn(long account, long cents, CyclicBarrier allInTransactions) throws Exception {
            accounts.touch(account);
            // Every caller now holds a connection of the application's pool, in its transaction.
            allInTransactions.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            return accounts.deposit(account, cents);
        }
    }

    static class Accounts {

        private final JdbcTemplate jdbc;
        private final JdbcFence fence;

        Accounts(JdbcTemplate jdbc, JdbcFence fence) {
            this.jdbc = jdbc;
            this.fence = fence;
        }

        void touch(long account) {
            jdbc.queryForObject("SELECT COUNT(*) FROM account WHERE id = ?", Long.class, account);
        }

        @Leased(name = "account-#{#account}", kind = LeaseKind.CORRECTNESS, waitFor = "${test.wait-for}")
        public FencingToken deposit(long account, long cents) {
            fence.advance("account-" + account, LeaseContext.token());
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", cents, account);
            return LeaseContext.token();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @ImportAutoConfiguration({DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
            JdbcTemplateAutoConfiguration.class, LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class})
    static class Application {

        @Bean
        Accounts accounts(JdbcTemplate jdbc, JdbcFence fence) {
            return new Accounts(jdbc, fence);
        }

        @Bean
        Transfers transfers(Accounts accounts) {
            return new Transfers(accounts);
        }
    }
}
