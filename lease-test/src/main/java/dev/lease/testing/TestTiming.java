package dev.lease.testing;

import java.time.Duration;

/**
 * The one scaling factor for timing-sensitive waits in tests: {@code -Dlease-test.time-factor=3} on a slow
 * machine triples every bound. Tests wait on conditions up to a scaled bound; they never assert speed.
 */
public final class TestTiming {

    /** The factor, from the {@code lease-test.time-factor} system property (default 1). */
    public static final double FACTOR = Double.parseDouble(System.getProperty("lease-test.time-factor", "1"));

    private TestTiming() {
    }

    /** {@code d} multiplied by the factor. */
    public static Duration scaled(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * FACTOR));
    }

    /** {@code seconds} seconds, scaled. */
    public static Duration seconds(long seconds) {
        return scaled(Duration.ofSeconds(seconds));
    }

    /** {@code millis} milliseconds, scaled. */
    public static Duration millis(long millis) {
        return scaled(Duration.ofMillis(millis));
    }
}
