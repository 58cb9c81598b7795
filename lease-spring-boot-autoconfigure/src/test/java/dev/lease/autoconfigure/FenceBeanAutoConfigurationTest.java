package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.Fence;
import dev.lease.fence.JdbcFence;
import dev.lease.spi.GrantFence;

/**
 * The application's {@link Fence} bean: {@link JdbcFence} by default, which also serves fence at grant; another
 * {@code Fence} of the application's replaces it, and fence at grant then goes through that one.
 */
class FenceBeanAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                    LeaseAutoConfiguration.class, JdbcFenceAutoConfiguration.class,
                    FenceAtGrantAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory", "spring.datasource.url=jdbc:h2:mem:fence-bean");

    @Test
    void theFenceBeanIsJdbcFenceAndServesFenceAtGrant() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Fence.class).hasSingleBean(GrantFence.class);
            assertThat(context.getBean(Fence.class)).isInstanceOf(JdbcFence.class)
                    .isSameAs(context.getBean(GrantFence.class));
        });
    }

    @Test
    void anotherFenceReplacesJdbcFenceAndFenceAtGrantGoesThroughIt() {
        List<String> advanced = new CopyOnWriteArrayList<>();
        runner.withBean(Fence.class, () -> (resource, token) -> advanced.add(resource + "@" + token.value()))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Fence.class).doesNotHaveBean(JdbcFence.class)
                            .hasSingleBean(GrantFence.class);
                    FencingToken token = context.getBean(LeaseTemplate.class).execute(
                            LeaseSpec.of("report", LeaseKind.CORRECTNESS).withFence("report-7"),
                            lease -> lease.token());
                    assertThat(advanced).containsExactly("report-7@" + token.value());
                });
    }

    @Test
    void withoutAnyFenceThereIsNoFenceAtGrant() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                        FenceAtGrantAutoConfiguration.class))
                .withPropertyValues("lease.backend=in-memory")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Fence.class)
                        .doesNotHaveBean(GrantFence.class).doesNotHaveBean(DataSource.class));
    }
}
