package dev.lease;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * Durations in messages and logs, in the form users write them ({@code 5m}, {@code 30s}, {@code 1500ms}) rather
 * than ISO-8601 ({@code PT5M}), so that a message can be matched against the configuration at a glance.
 */
public final class Durations {

    private static final long[] UNIT_SECONDS = {86_400, 3_600, 60, 1};
    private static final String[] UNIT_NAMES = {"d", "h", "m", "s"};

    private Durations() {
    }

    /**
     * The largest unit that expresses {@code duration} as a whole number ({@code 90s}, {@code 1500ms}), which
     * {@code lease.*} properties and {@code @Leased} attributes accept as written; a value that is not a whole
     * number of milliseconds (such as a third of a ttl) as a decimal ({@code 3.333333333s}).
     *
     * @param duration any duration, negative included
     * @return the duration as a property would write it
     */
    public static String format(Duration duration) {
        if (duration.isNegative()) {
            return "-" + format(duration.negated());
        }
        if (duration.isZero()) {
            return "0s";
        }
        long seconds = duration.getSeconds();
        int nanos = duration.getNano();
        if (nanos == 0) {
            for (int i = 0; i < UNIT_SECONDS.length; i++) {
                if (seconds % UNIT_SECONDS[i] == 0) {
                    return seconds / UNIT_SECONDS[i] + UNIT_NAMES[i];
                }
            }
        }
        BigDecimal exact = BigDecimal.valueOf(seconds).add(BigDecimal.valueOf(nanos, 9));
        if (nanos % 1_000_000 == 0) {
            return exact.movePointRight(3).toBigInteger() + "ms";
        }
        return seconds > 0 ? exact.stripTrailingZeros().toPlainString() + "s"
                : exact.movePointRight(3).stripTrailingZeros().toPlainString() + "ms";
    }

    /**
     * A measured time, such as a wait, to the millisecond: finer detail is noise in a log line.
     *
     * @param nanos the time in nanoseconds
     * @return the time as {@link #format} writes it, truncated to the millisecond
     */
    public static String formatNanos(long nanos) {
        return format(Duration.ofNanos(nanos).truncatedTo(ChronoUnit.MILLIS));
    }
}
