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
    void transactionalRunsDatabaseTransactionsBesideTheFencedKafkaTemplate() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(LeaderApplication.class)
                .web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .run("--reminders.instance=T", "--reminders.every=1h")) {
            // The fence needs no spring.kafka.producer.transaction-id-prefix, for which Boot would add a
            // KafkaTransactionManager and drop the database's: @Transactional (Reminders.write) must use the database's.
            assertThat(context.getBean(TransactionManager.class)).isInstanceOf(DataSourceTransactionManager.class);
            assertThat(context.getBeanProvider(FencedKafkaTemplate.class).getIfAvailable()).isNotNull();
        }
    }
}
