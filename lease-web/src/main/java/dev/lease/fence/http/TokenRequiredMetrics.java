package dev.lease.fence.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts the fenced requests refused with 428 as {@code lease.fence.token-required}, tagged by {@code reason}
 * ({@code missing}, {@code malformed}, {@code other-lease}). A meter of its own, not {@code lease.fence.rejected}:
 * that one counts stale tokens a fence compared and refused, tagged by the fence's table, and a request without a
 * usable token reached no fence (a client calling from outside a leased section, or without the customizer). Both
 * deserve an alert; they mean different fixes.
 */
final class TokenRequiredMetrics implements FencingRefusalResolver.TokenRequiredCounter {

    private final MeterRegistry meters;

    TokenRequiredMetrics(MeterRegistry meters) {
        this.meters = meters;
    }

    @Override
    public void count(FencingRefusal.Missing missing) {
        Counter.builder("lease.fence.token-required")
                .description("Fenced requests refused with 428 because they carried no token the server could compare")
                .tag("reason", missing.tag).register(meters).increment();
    }
}
