package dev.lease.autoconfigure.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.autoconfigure.LeaseAutoConfiguration;

/**
 * The lease must be the outer layer around {@code @Transactional}: the commit happens while the lease is held,
 * so a lease lost before the commit surfaces as LeaseLostException instead of a silent stale commit.
 */
class LeaseWrapsTransactionTest {

    @Test
    void theTransactionCommitsWhileTheLeaseIsStillHeld() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .withUserConfiguration(TxConfig.class)
                .run(context -> {
                    Billing billing = context.getBean(Billing.class);
                    billing.bill(7);
                    assertThat(billing.events()).containsExactly(
                            "in method: transaction active, lease invoice-7 valid",
                            "before commit: lease invoice-7 valid",
                            "after commit: lease invoice-7 valid");
                });
    }

    static class Billing {

        private final List<String> events = new ArrayList<>();

        public List<String> events() {
            return events;
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        @Transactional
        public void bill(long id) {
            events.add("in method: " + (TransactionSynchronizationManager.isActualTransactionActive()
                    ? "transaction active" : "no transaction") + ", " + leaseState("invoice-" + id));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    events.add("before commit: " + leaseState("invoice-" + id));
                }

                @Override
                public void afterCommit() {
                    events.add("after commit: " + leaseState("invoice-" + id));
                }
            });
        }

        private static String leaseState(String name) {
            return LeaseContext.find(name).map(l -> "lease " + l.name() + (l.isValid() ? " valid" : " invalid"))
                    .orElse("no lease " + name);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class TxConfig {

        @Bean
        DataSource dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Billing billing() {
            return new Billing();
        }
    }
}
