package dev.lease.micrometer;

import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import dev.lease.aop.OnceListener;

/**
 * Counts {@code @Once} calls as {@code lease.once}, tagged by {@code once.key} (the key as declared, such as
 * {@code report-#{period}}) and {@code outcome}: {@code ran}, or {@code skipped} when the key was committed before.
 * A steady {@code skipped} count beside a lease means duplicates the lease let through and {@code @Once} stopped.
 */
public final class OnceMetrics implements OnceListener {

    private final MeterRegistry meters;

    /** @param meters where {@code lease.once} is registered */
    public OnceMetrics(MeterRegistry meters) {
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    @Override
    public void completed(String declaredKey, String key, boolean ran) {
        Counter.builder("lease.once").description("@Once calls, by whether their body ran or was skipped")
                .tag("once.key", declaredKey).tag("outcome", ran ? "ran" : "skipped").register(meters).increment();
    }
}
