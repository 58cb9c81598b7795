package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.fence.Fence;
import dev.lease.fence.JdbcFence;
import dev.lease.testing.PostgresServer;

/**
 * Issue 32, item 2: the {@code lease_fence} table is checked when the auto-configured {@link JdbcFence} is created, as
 * {@code lease_lock} is, through a real {@code SpringApplication} on PostgreSQL (where the default,
 * {@code initialize-schema: embedded}, creates nothing).
 */
class JdbcFenceSchemaCheckPostgresTest {

    private static PostgresServer postgres;

    private static JdbcTemplate db;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PostgresServer.start();
        db = new JdbcTemplate(postgres.dataSource());
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @BeforeEach
    void noFenceTable() {
        db.execute("DROP TABLE IF EXISTS " + JdbcFence.TABLE);
    }

    @Test
    void withoutTheTableTheStartupFailsNamingTheTableAndTheFix() {
        assertThatThrownBy(() -> start(FenceApplication.class, Map.of()).close()).rootCause()
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("cannot read its table 'lease_fence'")
                .hasMessageContaining("does not exist")
                .hasMessageContaining("dev/lease/fence/schema-<platform>.sql")
                .hasMessageContaining("lease.fence.initialize-schema: always");
    }

    @Test
    void withTheTableItStarts() {
        new JdbcFence(db).createSchema();
        try (ConfigurableApplicationContext context = start(FenceApplication.class, Map.of())) {
            assertThat(context.getBean(JdbcFence.class).current("anything")).isEmpty();
        }
    }

    @Test
    void initializeSchemaAlwaysCreatesIt() {
        try (ConfigurableApplicationContext context = start(FenceApplication.class,
                Map.of("lease.fence.initialize-schema", "always"))) {
            new TransactionTemplate(new DataSourceTransactionManager(context.getBean(DataSource.class)))
                    .executeWithoutResult(tx -> context.getBean(JdbcFence.class)
                            .advance("created", new FencingToken("created", 7)));
        }
        assertThat(db.queryForObject("SELECT fence FROM lease_fence WHERE resource = 'created'", Long.class))
                .isEqualTo(7);
    }

    /** The application's own {@code Fence} replaces JdbcFence, and so its table is none of the starter's business. */
    @Test
    void aFenceOfTheApplicationsOwnIsNotChecked() {
        try (ConfigurableApplicationContext context = start(OwnFenceApplication.class, Map.of())) {
            assertThat(context.getBeansOfType(JdbcFence.class)).isEmpty();
        }
    }

    private static ConfigurableApplicationContext start(Class<?> application, Map<String, Object> properties) {
        Map<String, Object> all = new HashMap<>(Map.of(
                "spring.datasource.url", "jdbc:postgresql://localhost:" + postgres.port() + "/postgres",
                "spring.datasource.username", "postgres", "lease.backend", "in-memory"));
        all.putAll(properties);
        return new SpringApplicationBuilder(application).web(WebApplicationType.NONE).logStartupInfo(false)
                .properties(all).run();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class, FenceAtGrantAutoConfiguration.class})
    static class FenceApplication {
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class, FenceAtGrantAutoConfiguration.class})
    static class OwnFenceApplication {

        @Bean
        Fence ownFence() {
            return (resource, token) -> {
            };
        }
    }
}
