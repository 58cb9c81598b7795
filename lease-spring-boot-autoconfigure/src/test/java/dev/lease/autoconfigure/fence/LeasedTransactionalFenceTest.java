package dev.lease.autoconfigure.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;

/**
 * The lease on an outer bean, the transaction and the fence on an inner one, as services are usually split: the
 * starter's interceptor and a {@code @Transactional} service writing through {@link JdbcFence}. The fence's own
 * behaviour on each database is tested in lease-jdbc.
 */
class LeasedTransactionalFenceTest {

    @Test
    void aLeasedBeanCallingATransactionalBeanWritesUnderItsToken() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:leased-transactional-fence;DB_CLOSE_DELAY=-1");
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        new JdbcFence(jdbc).createSchema();
        jdbc.execute("CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        jdbc.update("INSERT INTO account (id, balance) VALUES (1, 0)");
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.getEnvironment().getPropertySources()
                    .addFirst(new MapPropertySource("test", Map.of("lease.backend", "in-memory")));
            context.registerBean(DataSource.class, () -> dataSource);
            context.register(BusinessConfiguration.class, LeaseAutoConfiguration.class, Payouts.class);
            context.refresh();
            Payouts payouts = context.getBean(Payouts.class);

            FencingToken first = payouts.pay(1, 5);
            FencingToken second = payouts.pay(1, 7);
            assertThat(second.value()).isGreaterThan(first.value());
            assertThat(new JdbcFence(jdbc).current("account-1")).hasValue(second.value());
            assertThat(jdbc.queryForObject("SELECT balance FROM account WHERE id = 1", Long.class)).isEqualTo(12);
            assertThatThrownBy(() -> context.getBean(AccountService.class).deposit(1, first, 1000))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(jdbc.queryForObject("SELECT balance FROM account WHERE id = 1", Long.class)).isEqualTo(12);
        }
        finally {
            jdbc.execute("DROP ALL OBJECTS");
        }
    }

    /** Takes the lease, then hands its token to the transactional service. */
    static class Payouts {

        private final AccountService accounts;

        Payouts(AccountService accounts) {
            this.accounts = accounts;
        }

        @Leased(name = "payout-#{#accountId}", kind = LeaseKind.CORRECTNESS)
        public FencingToken pay(long accountId, long amount) {
            accounts.deposit(accountId, LeaseContext.token(), amount);
            return LeaseContext.token();
        }
    }

    /** A business service as an application writes it: the fence check first, in the same transaction. */
    static class AccountService {

        private final JdbcTemplate jdbc;
        private final JdbcFence fence;

        AccountService(JdbcTemplate jdbc, JdbcFence fence) {
            this.jdbc = jdbc;
            this.fence = fence;
        }

        @Transactional
        public void deposit(long accountId, FencingToken token, long amount) {
            fence.advance("account-" + accountId, token);
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, accountId);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class BusinessConfiguration {

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        AccountService accountService(DataSource dataSource) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            return new AccountService(jdbc, new JdbcFence(jdbc));
        }
    }
}
