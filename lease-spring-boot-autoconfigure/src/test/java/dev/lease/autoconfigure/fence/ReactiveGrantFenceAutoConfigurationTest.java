package dev.lease.autoconfigure.fence;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.h2.H2ConnectionOption;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;

import dev.lease.FencingToken;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.ReactiveLeaseAutoConfiguration;
import dev.lease.fence.R2dbcFence;
import dev.lease.reactive.ReactiveGrantFence;

/**
 * The starter's {@link ReactiveGrantFence} over its {@link R2dbcFence} (a single DatabaseClient, here on H2 through
 * r2dbc-h2) keeps both of the fence's steps: a nested section's advance joins the caller's reactive transaction, which
 * holds the row's lock. A fence made of {@code advanceAtGrant} alone advanced in a transaction of its own and waited
 * for that lock.
 */
class ReactiveGrantFenceAutoConfigurationTest {

    private static final ConnectionFactory H2 = new H2ConnectionFactory(H2ConnectionConfiguration.builder()
            .inMemory("reactive-grant-fence").property(H2ConnectionOption.DB_CLOSE_DELAY, "-1").build());

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                    ReactiveLeaseAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory")
            .withBean(DatabaseClient.class, () -> DatabaseClient.create(H2));

    @Test
    void aNestedSectionsFenceJoinsTheCallersTransaction() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(ReactiveGrantFence.class);
            R2dbcFence fence = context.getBean(R2dbcFence.class);
            fence.createSchema().block(seconds(30));
            ReactiveGrantFence atGrant = context.getBean(ReactiveGrantFence.class);
            TransactionalOperator transactions = TransactionalOperator.create(new R2dbcTransactionManager(H2));
            String resource = "invoice-" + System.nanoTime();

            fence.advance(resource, new FencingToken("invoice", 3))
                    .then(atGrant.advanceOnReentry(resource, new FencingToken("invoice", 4), Duration.ofSeconds(2)))
                    .as(transactions::transactional)
                    .block(seconds(30));

            assertThat(fence.current(resource).block(seconds(30))).isEqualTo(4L);
        });
    }

    /** lease.fence.idle-timeout reaches the reactive fence too: checked, and refused naming the property. */
    @Test
    void aNegativeFenceIdleTimeoutFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("lease.fence.idle-timeout=-1s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("R2dbcFence").hasMessageContaining("lease.fence.idle-timeout")
                    .hasMessageContaining("-1S");
        });
    }
}
