package dev.lease.fence.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.springframework.core.NestedExceptionUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.fence.jpa.app.FencedApp;

/**
 * A fenced entity's delete keeps the row's fence in {@code lease_fence}: an application whose only fenced writes are
 * {@code @FenceColumn} entities writes that table, so a missing one fails its startup naming the entities and the
 * fix, as for any other writer through the fence (it used to start, and fail at its first fenced delete).
 */
class FenceTableStartupCheckTest {

    @Test
    void withoutTheFenceTableAnApplicationWithFencedEntitiesFailsToStartNamingThem() {
        Throwable failure = catchThrowable(() -> FencedApp.start("jdbc:h2:mem:" + UUID.randomUUID()
                + ";DB_CLOSE_DELAY=-1", Map.of("lease.fence.initialize-schema", "never")).close());
        assertThat(failure).as("the startup failed").isNotNull();
        assertThat(NestedExceptionUtils.getMostSpecificCause(failure)).isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("entity Invoice (@FenceColumn: its deletes keep tombstones there)")
                .hasMessageContaining("cannot read its table 'lease_fence'")
                .hasMessageContaining("lease.fence.initialize-schema: always");
    }
}
