package dev.lease.samples.leader;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionManager;

import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * The application as Boot configures it, against the JVM's embedded ZooKeeper and Kafka broker (shared with
 * {@code LeaderDemoTest} when both run in one JVM).
 */
class LeaderApplicationTest {

    @Test
    void transactionalRunsDatabaseTransactionsAlthoughKafkaProducersAreTransactional() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(LeaderApplication.class)
                .web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .run("--reminders.instance=T", "--reminders.every=1h")) {
            // Boot adds a KafkaTransactionManager for spring.kafka.producer.transaction-id-prefix; the database's
            // must still be the one @Transactional (Reminders.write) uses.
            assertThat(context.getBean(TransactionManager.class)).isInstanceOf(DataSourceTransactionManager.class);
            assertThat(context.getBeanProvider(FencedKafkaTemplate.class).getIfAvailable()).isNotNull();
        }
    }
}
