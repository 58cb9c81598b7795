package dev.lease.micrometer;

import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import dev.lease.fence.FenceListener;
import dev.lease.fence.StaleTokenException;

/**
 * Counts the stale writes fences refused, as {@code lease.fence.rejected} tagged by {@code table}
 * ({@code lease_fence} for {@code JdbcFence.advance}, else the {@code FencedTable}'s table). Any increase means a
 * holder kept writing after it lost its lease, and the fence stopped it: worth an alert.
 */
public final class FenceMetrics implements FenceListener {

    private final MeterRegistry meters;

    /** @param meters where {@code lease.fence.rejected} is registered */
    public FenceMetrics(MeterRegistry meters) {
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    @Override
    public void rejected(String table, StaleTokenException rejection) {
        Counter.builder("lease.fence.rejected").description("Writes refused by a fence because their token was stale")
                .tag("table", table).register(meters).increment();
    }
}
