package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.fence.Fence;
import dev.lease.fence.JdbcFence;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * Issue 32, item 2: the auto-configured {@link JdbcFence}'s table, {@code lease_fence}, is checked at startup as
 * {@code lease_lock} is, through a real {@code SpringApplication} on PostgreSQL (where the default,
 * {@code initialize-schema: embedded}, creates nothing), when the application writes through the fence.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcFenceSchemaCheckPostgresTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private static JdbcTemplate db;

    @BeforeAll
    static void createTables() {
        db = new JdbcTemplate(POSTGRES.get().dataSource());
    }

    @BeforeEach
    void noFenceTable() {
        db.execute("DROP TABLE IF EXISTS " + JdbcFence.TABLE);
    }

    /** A bean that has the fence injected writes through it. */
    @Test
    void withoutTheTableAnApplicationThatWritesThroughTheFenceFailsToStartNamingTheTableAndTheFix() {
        assertThat(startupFailure(FenceApplication.class)).isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("JdbcFence (written through by bean 'payments') cannot read its table "
                        + "'lease_fence'")
                .hasMessageContaining("does not exist")
                .hasMessageContaining("Fix: create the table with the DDL in dev/lease/fence/schema-<platform>.sql "
                        + "(for example in a Flyway migration), or set lease.fence.initialize-schema: always.");
    }

    /** So does a {@code @Leased} method with a fence at grant, which reaches the fence through the engine. */
    @Test
    void aLeasedMethodWithAFenceWritesThroughItToo() {
        assertThat(startupFailure(FenceAtGrantApplication.class)).isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("Invoices.bill) cannot read its table 'lease_fence'");
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

    /**
     * The JdbcFence bean comes with every DataSource, but an application whose fenced writes are JPA entities never
     * writes through it: it starts, told once at INFO what to do should anything write through it later.
     */
    @Test
    void anApplicationThatNeverWritesThroughTheFenceStartsAndIsTold(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start(NoFenceWritesApplication.class, Map.of())) {
            assertThat(context.getBeansOfType(JdbcFence.class)).hasSize(1);
        }
        assertThat(output).containsOnlyOnce("JdbcFence cannot read its table 'lease_fence'")
                .contains("nothing found at startup writes through it")
                .contains("lease.fence.initialize-schema: always");
    }

    /** The application's own {@code Fence} replaces JdbcFence, and so its table is none of the starter's business. */
    @Test
    void aFenceOfTheApplicationsOwnIsNotChecked() {
        try (ConfigurableApplicationContext context = start(OwnFenceApplication.class, Map.of())) {
            assertThat(context.getBeansOfType(JdbcFence.class)).isEmpty();
        }
    }

    /** What the startup failed with, under Spring's wrapping if any. */
    private static Throwable startupFailure(Class<?> application) {
        Throwable failure = catchThrowable(() -> start(application, Map.of()).close());
        assertThat(failure).as("the startup failed").isNotNull();
        return NestedExceptionUtils.getMostSpecificCause(failure);
    }

    private static ConfigurableApplicationContext start(Class<?> application, Map<String, Object> properties) {
        Map<String, Object> all = new HashMap<>(Map.of(
                "spring.datasource.url", POSTGRES.get().jdbcUrl(),
                "spring.datasource.username", "postgres", "lease.backend", "in-memory"));
        all.putAll(properties);
        return new SpringApplicationBuilder(application).web(WebApplicationType.NONE).logStartupInfo(false)
                .properties(all).run();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class, FenceAtGrantAutoConfiguration.class})
    static class NoFenceWritesApplication {
    }

    @Configuration(proxyBeanMethods = false)
    @Import(NoFenceWritesApplication.class)
    static class FenceApplication {

        @Bean
        Payments payments(JdbcFence fence) {
            return new Payments(fence);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import(NoFenceWritesApplication.class)
    static class FenceAtGrantApplication {

        @Bean
        Invoices invoices() {
            return new Invoices();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import(NoFenceWritesApplication.class)
    static class OwnFenceApplication {

        @Bean
        Fence ownFence() {
            return (resource, token) -> {
            };
        }
    }

    /** Has the fence injected, to advance it in its transactions. */
    record Payments(JdbcFence fence) {
    }

    /** Fenced at grant: the engine advances the fence before the body runs. */
    static class Invoices {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        public void bill(long id) {
        }
    }
}
